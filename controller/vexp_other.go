//go:build !amd64 || purego

package controller

// useVecExp is false: no vector kernel without amd64 assembly.
var useVecExp = false

func expAsm(dst, src *float64, n int) { panic("controller: no vector kernel") }
