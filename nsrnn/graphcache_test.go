package nsrnn

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestGraphCache checks the graph cache's bounds: by default no bound by
// number (a model whose batches come in more lengths than the former
// bound of 256 keeps them all, rather than compiling every one again in
// every epoch), GraphCacheBytes by the graphs' estimated sizes and
// MaxGraphs by number, each dropping the least recently used first and
// always keeping the graph just built; and results that do not depend on
// which graphs were kept.
func TestGraphCache(t *testing.T) {
	cfg := Config{Kind: LSTM, InputVocab: 2, OutputVocab: 3, Hidden: 2}
	seq := func(n int) Batch { return Batch{make([]int, n)} }
	lengths := make([]int, 300)
	for i := range lengths {
		lengths[i] = i + 1
	}
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.MaxGraphs != 0 || m.GraphCacheBytes != DefaultGraphCacheBytes {
		t.Fatalf("defaults: MaxGraphs %d, GraphCacheBytes %d", m.MaxGraphs, m.GraphCacheBytes)
	}
	m.Workers = 1
	want := map[int]float64{}
	for _, n := range lengths {
		l, err := m.Loss(seq(n))
		if err != nil {
			t.Fatal(err)
		}
		want[n] = l
	}
	if m.Graphs() != len(lengths) {
		t.Errorf("%d graphs cached after %d lengths, want all", m.Graphs(), len(lengths))
	}

	// A budget of the graphs of lengths 1–10 (positions 2–11) keeps the
	// latest of them; the oldest go first.
	budget := 0.0
	for n := 1; n <= 10; n++ {
		budget += cfg.graphBytes(1, n+1)
	}
	m2, _ := New(cfg, 1)
	m2.Workers, m2.GraphCacheBytes = 1, int64(budget)
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} {
		if _, err := m2.Loss(seq(n)); err != nil {
			t.Fatal(err)
		}
	}
	if m2.Graphs() != 10 {
		t.Fatalf("%d graphs within a budget for 10, want 10", m2.Graphs())
	}
	// Using length 1 again makes it the most recent; length 11 (12
	// positions, with the budget full) then drops the least recently
	// used, 2, 3 and 4 (3 + 4 + 5 positions), to fit.
	if _, err := m2.Loss(seq(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Loss(seq(11)); err != nil {
		t.Fatal(err)
	}
	var kept []int
	for k := range m2.graphs {
		kept = append(kept, k.n)
	}
	slices.Sort(kept)
	if fmt.Sprint(kept) != "[1 5 6 7 8 9 10 11]" {
		t.Errorf("kept lengths %v, want [1 5 6 7 8 9 10 11]", kept)
	}
	if sum := m2.cacheBytes; sum > budget || sum <= 0 {
		t.Errorf("cached bytes %g, budget %g", sum, budget)
	}
	// A budget smaller than one graph keeps the graph just built.
	m2.GraphCacheBytes = 1
	if l, err := m2.Loss(seq(200)); err != nil || l != want[200] {
		t.Fatalf("length 200 under a budget of 1 byte: %v, %v (want %v)", l, err, want[200])
	}
	if m2.Graphs() != 1 {
		t.Errorf("%d graphs under a budget of 1 byte, want the one just built", m2.Graphs())
	}

	// MaxGraphs bounds the number as before.
	m3, _ := New(cfg, 1)
	m3.Workers, m3.MaxGraphs = 1, 3
	for _, n := range lengths[:20] {
		l, err := m3.Loss(seq(n))
		if err != nil {
			t.Fatal(err)
		}
		if l != want[n] {
			t.Errorf("length %d: loss %v with MaxGraphs 3, %v with every graph kept", n, l, want[n])
		}
	}
	if m3.Graphs() != 3 {
		t.Errorf("%d graphs with MaxGraphs 3", m3.Graphs())
	}
	m3.ReleaseGraphs()
	if m3.Graphs() != 0 || m3.cacheBytes != 0 {
		t.Errorf("after ReleaseGraphs: %d graphs, %g bytes", m3.Graphs(), m3.cacheBytes)
	}
}

// The graphs a model keeps do not keep the nondeterministic stack's
// scratch tapes alive: the stack shares one tape per batch size, replaced
// by a larger one when a longer run comes, and a graph kept in the cache
// must not hold on to the tape it last ran on (graphs run in order of
// length, as EvaluateByLength runs them, would otherwise keep one tape
// each: 2.5 times the memory of the longest run alone at these sizes,
// where the graphs themselves take a fraction of it).
func TestGraphsDoNotKeepTapes(t *testing.T) {
	cfg := Config{Kind: RNS, InputVocab: 5, OutputVocab: 6, Hidden: 20, States: 2, Symbols: 3, InitRange: 0.1}
	grown := func(lengths ...int) uint64 {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		m.Workers = 1
		// The tape's idle helper goroutines keep an earlier model's tape
		// for a tenth of a second.
		time.Sleep(300 * time.Millisecond)
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range lengths {
			if _, _, err := m.Gradient(randomBatch(rng, 10, n, cfg.InputVocab)); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if len(m.graphs) != len(lengths) {
			t.Fatalf("%d graphs cached after %d lengths", len(m.graphs), len(lengths))
		}
		runtime.KeepAlive(m)
		return ms.HeapAlloc - min(base, ms.HeapAlloc)
	}
	one := grown(100)
	all := grown(20, 40, 60, 80, 100)
	if float64(all) > 1.6*float64(one) {
		t.Errorf("graphs of lengths 20 to 100 keep %.1f MB, the graph of length 100 alone %.1f MB", float64(all)/1e6, float64(one)/1e6)
	}
}
