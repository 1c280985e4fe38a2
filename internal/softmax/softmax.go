// Package softmax has the exponential sums of a softmax over float32 scores
// with a float64 bias: the largest score of a row, and the sum (and terms)
// of the exponentials of the scores shifted by it, computed with Exp.
//
// # Exactness
//
// Exp is a fast e^x for x ≤ 0 with a relative error below 1e-10. On amd64
// CPUs with AVX-512 (F and DQ) MaxScore and ExpScores work on eight scores
// at a time (softmax_amd64.s); each term is then the same float64 as Exp
// gives (the same operations in the same order, without fused
// multiply-adds), and only the sum's order differs (eight partial sums),
// so results differ from the scalar loops by rounding in the sum alone.
// The build tag purego, or another CPU, keeps the scalar loops; the tests
// check both in one binary.
package softmax

import "math"

// exp2Table holds 2^(j/64), j = 0 … 63, for Exp.
var exp2Table = func() (t [64]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 64)
	}
	return t
}()

// Exp returns e^x for x ≤ 0 (the softmax's shifted scores) with a relative
// error below 1e-10: x = (64e + j)·ln2/64 + r with |r| ≤ ln2/128, e^x = 2^e ·
// 2^(j/64) · e^r, 2^(j/64) from a table, e^r by its Taylor polynomial of
// degree 3 (truncation error below 4e-11), and 2^e by building the float's
// exponent. Below −708 it returns 0 (the true value is under 3e−308), and
// NaN for NaN. It is about twice as fast as math.Exp, which handles every
// argument, and small enough to be inlined.
func Exp(x float64) float64 {
	if !(x > -708) {
		if x != x {
			return x
		}
		return 0
	}
	// Round x·64/ln2 ≤ 0 to the nearest integer: conversion truncates
	// toward zero, which for the negative x·64/ln2 − 1/2 is the ceiling.
	// The conversions to float64 round every product on its own: they
	// keep the compiler from fusing a multiply and an add (GOAMD64=v3
	// would), so that the vector kernel's terms are the same floats.
	n := int64(float64(x*(64/math.Ln2)) - 0.5)
	r := x - float64(float64(n)*(math.Ln2/64))
	p := 1 + float64(r*(1+float64(r*(0.5+float64(r*(1.0/6))))))
	return p * exp2Table[n&63] * math.Float64frombits(uint64(n>>6+1023)<<52)
}

// MaxScore returns the largest of float64(row[i]) + bias[i] (−∞ for an
// empty row); NaN scores are skipped (they make the sum of ExpScores NaN).
// bias must be at least as long as row.
func MaxScore(row []float32, bias []float64) float64 {
	bias = bias[:len(row)]
	m := math.Inf(-1)
	if n := len(row) &^ 7; n > 0 && useVec {
		m = maxScoreAsm(&row[0], &bias[0], n)
		row, bias = row[n:], bias[n:]
	}
	return maxScoreGo(row, bias, m)
}

func maxScoreGo(row []float32, bias []float64, m float64) float64 {
	bias = bias[:len(row)]
	for i, x := range row {
		if y := float64(x) + bias[i]; y > m {
			m = y
		}
	}
	return m
}

// ExpScores returns Σ_i Exp(row[i] + bias[i] − m) for m at least every
// score, and with store replaces row[i] by float32 of its term. bias must
// be at least as long as row.
func ExpScores(row []float32, bias []float64, m float64, store bool) float64 {
	bias = bias[:len(row)]
	sum := 0.0
	if n := len(row) &^ 7; n > 0 && useVec {
		sum = expScoresAsm(&row[0], &bias[0], n, m, store, &consts)
		row, bias = row[n:], bias[n:]
	}
	return sum + expScoresGo(row, bias, m, store)
}

func expScoresGo(row []float32, bias []float64, m float64, store bool) float64 {
	bias = bias[:len(row)]
	sum := 0.0
	for i, x := range row {
		e := Exp(float64(x) + bias[i] - m)
		if store {
			row[i] = float32(e)
		}
		sum += e
	}
	return sum
}

// LogSumExpScores returns the largest score m of float64(row[i]) + bias[i]
// and Σ_i Exp(score_i − m), in one pass over the row: the sum is kept
// relative to the largest score so far and rescaled when a larger one comes
// (about ln(len(row)) times for scores in random order). A NaN score makes
// the sum NaN.
func LogSumExpScores(row []float32, bias []float64) (m, sum float64) {
	bias = bias[:len(row)]
	m = math.Inf(-1)
	for i, x := range row {
		y := float64(x) + bias[i]
		if y > m {
			sum = sum*Exp(m-y) + 1
			m = y
		} else {
			sum += Exp(y - m)
		}
	}
	return m, sum
}

// consts are the constants of Exp as the vector kernel reads them, each
// the float64 that Exp's expression rounds it to: 64/ln2, 1/2, ln2/64, 1,
// 1/6, −708, then the table.
var consts = expConsts{[6]float64{64 / math.Ln2, 0.5, math.Ln2 / 64, 1, 1.0 / 6, -708}, exp2Table}

// expConsts is the layout the vector kernel reads: six constants, then the
// table.
type expConsts struct {
	c     [6]float64
	table [64]float64
}
