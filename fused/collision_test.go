package fused

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestHashCollision finds two input nodes whose 32-bit hashes collide (a
// birthday search over their names), checks that HashCollision reports
// them, and shows why it matters: gorgonia's compiled program computes
// a − b as a − a.
func TestHashCollision(t *testing.T) {
	g := G.NewGraph()
	seen := map[uint32]*G.Node{}
	var a, b *G.Node
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; a == nil; i++ {
		if i == 1<<20 {
			t.Fatal("no collision among 2^20 names")
		}
		n := G.NewVector(g, tensor.Float64, G.WithShape(1), G.WithName(fmt.Sprintf("x%016x", rng.Uint64())))
		if m, ok := seen[n.Hashcode()]; ok {
			a, b = m, n
		}
		seen[n.Hashcode()] = n
	}
	if x, y := HashCollision(g); x == nil || x.Hashcode() != y.Hashcode() || x == y {
		t.Fatalf("HashCollision found %v and %v in a graph with %v and %v", x, y, a, b)
	}

	// A small graph with only the colliding pair.
	g2 := G.NewGraph()
	a2 := G.NewVector(g2, tensor.Float64, G.WithShape(1), G.WithName(a.Name()), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{5}))))
	b2 := G.NewVector(g2, tensor.Float64, G.WithShape(1), G.WithName(b.Name()), G.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{2}))))
	d := G.Must(G.Sub(a2, b2))
	if x, _ := HashCollision(g2); x == nil {
		t.Fatal("HashCollision missed the pair")
	}
	vm := G.NewTapeMachine(g2)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got := d.Value().Data().([]float64)[0]
	t.Logf("gorgonia computes %s − %s = 5 − 2 as %v", a.Name(), b.Name(), got)
	if got == 3 {
		t.Log("gorgonia no longer merges nodes by hash alone; HashCollision stays a cheap guard")
	}

	// No collision in an ordinary graph.
	g3 := G.NewGraph()
	x := G.NewVector(g3, tensor.Float64, G.WithShape(1), G.WithName("x"))
	G.Must(G.Add(x, x))
	if p, q := HashCollision(g3); p != nil {
		t.Errorf("HashCollision reported %v and %v", p, q)
	}
}
