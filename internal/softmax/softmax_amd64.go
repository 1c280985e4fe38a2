//go:build amd64 && !purego

package softmax

import "golang.org/x/sys/cpu"

// useVec selects the AVX-512 kernels; tests turn it off to check the scalar
// loops in the same binary.
var useVec = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// maxScoreAsm returns the largest of m = −∞ and float64(row[i]) + bias[i],
// i < n, NaN scores skipped; n is a positive multiple of 8.
//
//go:noescape
func maxScoreAsm(row *float32, bias *float64, n int) float64

// expScoresAsm is expScoresGo for n (a positive multiple of 8) scores, with
// k the constants (consts).
//
//go:noescape
func expScoresAsm(row *float32, bias *float64, n int, m float64, store bool, k *expConsts) float64
