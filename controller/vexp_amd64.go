//go:build amd64 && !purego

package controller

import "golang.org/x/sys/cpu"

// useVecExp selects expAsm: AVX-512, and the fused multiply-adds that
// math.Exp uses where the CPU has them (AVX and FMA, which AVX-512
// implies); tests turn it off to check the scalar path in the same binary.
var useVecExp = cpu.X86.HasAVX512F && cpu.X86.HasAVX && cpu.X86.HasFMA

// expAsm sets dst[i] to e^src[i], i < n (a positive multiple of 8), as
// math.Exp computes it for |src[i]| ≤ expSafe; other lanes are left to
// expAll.
//
//go:noescape
func expAsm(dst, src *float64, n int)
