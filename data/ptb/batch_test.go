package ptb

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// stream returns the tokens 0 … n−1 shifted by 1 (so that no token equals
// the pad 0): x_i = i+1.
func stream(n int) []int {
	x := make([]int, n)
	for i := range x {
		x[i] = i + 1
	}
	return x
}

// checkChunks checks the chunks of tokens with B rows and T positions:
// concatenating each row over the chunks, and the rows in order, gives
// every target x_1 … x_{N−1} exactly once in order followed only by
// padding; every input is the token before its target; padding has input
// pad and target NoTarget; chunk shapes are B × T except a shorter last.
func checkChunks(t *testing.T, tokens []int, B, T, pad int) {
	t.Helper()
	bt, err := NewBatcher(tokens, B, T, pad)
	if err != nil {
		t.Fatal(err)
	}
	cs, m, err := Chunks(tokens, B, T, pad)
	if err != nil {
		t.Fatal(err)
	}
	n := len(tokens)
	if m != n-1 || bt.NumTargets() != n-1 {
		t.Errorf("targets %d / %d, want %d", m, bt.NumTargets(), n-1)
	}
	L := (n - 1 + B - 1) / B
	if bt.RowLen() != L || bt.BatchSize() != B || bt.BPTT() != T {
		t.Errorf("RowLen %d BatchSize %d BPTT %d, want %d %d %d", bt.RowLen(), bt.BatchSize(), bt.BPTT(), L, B, T)
	}
	if want := (L + T - 1) / T; len(cs) != want || bt.NumChunks() != want {
		t.Fatalf("%d chunks (NumChunks %d), want %d", len(cs), bt.NumChunks(), want)
	}
	rowsIn := make([][]int, B)
	rowsTg := make([][]int, B)
	real := 0
	for k, c := range cs {
		want := T
		if k == len(cs)-1 {
			want = L - k*T
		}
		if len(c.Inputs) != B || len(c.Targets) != B {
			t.Fatalf("chunk %d: %d input rows, %d target rows, want %d", k, len(c.Inputs), len(c.Targets), B)
		}
		if c.NumTargets() == 0 {
			t.Errorf("chunk %d has no real target", k)
		}
		real += c.NumTargets()
		for b := range B {
			if len(c.Inputs[b]) != want || len(c.Targets[b]) != want {
				t.Fatalf("chunk %d row %d: %d inputs, %d targets, want %d", k, b, len(c.Inputs[b]), len(c.Targets[b]), want)
			}
			rowsIn[b] = append(rowsIn[b], c.Inputs[b]...)
			rowsTg[b] = append(rowsTg[b], c.Targets[b]...)
		}
		ck, err := bt.Chunk(k)
		if err != nil || !reflect.DeepEqual(ck, c) {
			t.Errorf("Chunk(%d) = %v, %v; differs from Chunks", k, ck, err)
		}
	}
	if real != n-1 {
		t.Errorf("%d real targets in the chunks, want %d", real, n-1)
	}
	// Concatenate the rows: the targets, then only padding.
	var allIn, allTg []int
	for b := range B {
		allIn = append(allIn, rowsIn[b]...)
		allTg = append(allTg, rowsTg[b]...)
	}
	if len(allTg) != B*L {
		t.Fatalf("%d positions, want B·L = %d", len(allTg), B*L)
	}
	if !reflect.DeepEqual(allTg[:n-1], tokens[1:]) {
		t.Errorf("targets row by row are not x_1 … x_{N−1}")
	}
	if !reflect.DeepEqual(allIn[:n-1], tokens[:n-1]) {
		t.Errorf("inputs row by row are not x_0 … x_{N−2}")
	}
	for j := n - 1; j < B*L; j++ {
		if allIn[j] != pad || allTg[j] != NoTarget {
			t.Errorf("padding position %d: input %d target %d, want %d %d", j, allIn[j], allTg[j], pad, NoTarget)
		}
	}
	// Each row starts at x_{bL}, where row b−1's targets end.
	for b := range B {
		if b*L < n-1 && rowsIn[b][0] != tokens[b*L] {
			t.Errorf("row %d starts with %d, want x_%d = %d", b, rowsIn[b][0], b*L, tokens[b*L])
		}
	}
}

func TestBatcherCoversEveryTarget(t *testing.T) {
	tests := []struct{ n, B, T int }{
		{2, 1, 1},     // a single target
		{11, 1, 3},    // one row, T does not divide L = 10
		{11, 2, 5},    // B divides N−1, T divides L
		{11, 3, 2},    // B does not divide 10: L = 4, last row 2 targets
		{10, 4, 2},    // L = 3, rows 3 3 3 0: a row of padding only
		{14, 10, 1},   // L = 2, rows 2×6 + 1, then 3 empty rows
		{5, 8, 3},     // B > N−1: L = 1
		{101, 7, 4},   // L = 15, T does not divide it
		{101, 7, 100}, // T > L: one short chunk
		{1000, 20, 35},
		{1001, 20, 35},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("N=%d,B=%d,T=%d", tc.n, tc.B, tc.T), func(t *testing.T) {
			checkChunks(t, stream(tc.n), tc.B, tc.T, 0)
		})
	}
}

func TestChunkLayout(t *testing.T) {
	// N = 11, B = 3: L = 4. Row 0 targets x1…x4, row 1 x5…x8, row 2 x9 x10
	// and two padded positions; T = 3 gives chunks of 3 and 1 positions.
	x := []int{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	cs, m, err := Chunks(x, 3, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Chunk{
		{Inputs: [][]int{{10, 11, 12}, {14, 15, 16}, {18, 19, 0}}, Targets: [][]int{{11, 12, 13}, {15, 16, 17}, {19, 20, -1}}},
		{Inputs: [][]int{{13}, {17}, {0}}, Targets: [][]int{{14}, {18}, {-1}}},
	}
	if m != 10 || !reflect.DeepEqual(cs, want) {
		t.Errorf("Chunks = %v, %d\nwant %v, 10", cs, m, want)
	}
}

func TestBatcherErrors(t *testing.T) {
	tests := []struct {
		tokens    []int
		B, T, pad int
		want      string
	}{
		{stream(10), 0, 5, 0, "batch size 0"},
		{stream(10), -2, 5, 0, "batch size -2"},
		{stream(10), 2, 0, 0, "BPTT length 0"},
		{stream(1), 1, 1, 0, "split of 1 tokens, want at least 2"},
		{nil, 1, 1, 0, "split of 0 tokens"},
		{stream(10), 1, 1, -1, "pad id -1"},
		{[]int{1, 2, -1, 3}, 1, 1, 0, "token 2 has negative id -1"},
		{stream(10), 1 << 40, 3, 0, "cells"},
	}
	for _, tc := range tests {
		_, err := NewBatcher(tc.tokens, tc.B, tc.T, tc.pad)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewBatcher(%v, %d, %d, %d): error %v, want %q", tc.tokens, tc.B, tc.T, tc.pad, err, tc.want)
		}
		if _, _, err := Chunks(tc.tokens, tc.B, tc.T, tc.pad); err == nil {
			t.Errorf("Chunks(%v, %d, %d, %d): no error", tc.tokens, tc.B, tc.T, tc.pad)
		}
	}
	bt, err := NewBatcher(stream(10), 2, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{-1, bt.NumChunks(), 1 << 40} {
		if _, err := bt.Chunk(k); !errors.Is(err, ErrChunkRange) {
			t.Errorf("Chunk(%d): error %v, want ErrChunkRange", k, err)
		}
	}
	// A T near the int range does not overflow the chunk count.
	cs, n, err := Chunks(stream(10), 2, math.MaxInt, 0)
	if err != nil || len(cs) != 1 || n != 9 || len(cs[0].Inputs) != 2 || len(cs[0].Inputs[0]) != 5 {
		t.Errorf("B = 2, T = MaxInt: %d chunks, %d targets, %v", len(cs), n, err)
	}
}
