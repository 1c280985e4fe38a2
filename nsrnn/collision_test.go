package nsrnn

import (
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
)

// TestGraphRebuiltOnHashCollision: a graph that runs on gorgonia's tape
// machine (the executor, which does not merge nodes, is turned off) and
// whose nodes have colliding hashes (which gorgonia's compiler would
// merge) is built again with other hashes, and its loss is the loss of a
// graph built without one; a collision that every build has is an error
// naming the graph.
func TestGraphRebuiltOnHashCollision(t *testing.T) {
	defer func(v bool) { useTapeMachine = v }(useTapeMachine)
	useTapeMachine = true
	cfg := streamConfigs()["rns-D3"]
	rng := rand.New(rand.NewPCG(3, 4))
	batch := randomBatch(rng, 3, 7, min(cfg.InputVocab, cfg.OutputVocab-1)) // no EOS in sentence mode
	m, err := New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Loss(batch)
	if err != nil {
		t.Fatal(err)
	}
	m.ReleaseGraphs()

	defer func(f func(*G.ExprGraph) (a, b *G.Node)) { hashCollision = f }(hashCollision)
	var builds []*G.ExprGraph
	hashCollision = func(g *G.ExprGraph) (a, b *G.Node) {
		builds = append(builds, g)
		if len(builds) < 3 { // the first two builds "collide"
			ns := g.AllNodes()
			return ns[0], ns[1]
		}
		return nil, nil
	}
	got, err := m.Loss(batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(builds) != 3 || builds[0] == builds[2] {
		t.Fatalf("%d builds, want 3", len(builds))
	}
	if got != want {
		t.Errorf("loss %v after rebuilding, %v from a graph built once", got, want)
	}

	m.ReleaseGraphs()
	builds = nil
	hashCollision = func(g *G.ExprGraph) (a, b *G.Node) {
		builds = append(builds, g)
		ns := g.AllNodes()
		return ns[0], ns[1]
	}
	if _, err := m.Loss(batch); err == nil || !strings.Contains(err.Error(), "length 7") || !strings.Contains(err.Error(), "equal hashes") {
		t.Errorf("a collision in every build: error %v", err)
	}
	if len(builds) != 8 {
		t.Errorf("%d builds before giving up, want 8", len(builds))
	}
}
