// Package fma tells whether this build's compiler fuses a multiply and an
// add into one instruction with a single rounding.
//
// The Go specification lets an implementation compute x*y + z with one
// rounding instead of two. The compiler does so on arm64, ppc64le, s390x
// and riscv64, and on amd64 from GOAMD64=v3; elsewhere it rounds twice.
// Results then differ in their last bits from one build to another, while
// each build repeats its own exactly. Tests that hold a file of bits made
// by one build compare within rounding where Fused reports true.
package fma

// mulAdd is x*y + z as the compiler builds it: fused or not.
//
//go:noinline
func mulAdd(x, y, z float64) float64 { return x*y + z }

// a and b are variables, so that the compiler cannot fold their product:
// a·b = 1 − 2⁻⁶⁰ exactly, which rounds to 1.
var a, b = 1 + 0x1p-30, 1 - 0x1p-30

// Fused reports whether the compiler fuses x*y + z in this build: then
// a·b − 1 is −2⁻⁶⁰, rounded once; otherwise the product rounds to 1 first
// and the difference is 0.
func Fused() bool { return mulAdd(a, b, -1) != 0 }
