//go:build !amd64 || purego

package softmax

// useVec is false: no vector kernels without amd64 assembly.
var useVec = false

func maxScoreAsm(row *float32, bias *float64, n int) float64 { panic("softmax: no vector kernels") }

func expScoresAsm(row *float32, bias *float64, n int, m float64, store bool, k *expConsts) float64 {
	panic("softmax: no vector kernels")
}
