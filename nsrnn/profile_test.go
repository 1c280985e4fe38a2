package nsrnn

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/internal/gradcheck"
)

// With EnvCUDAProfile=1 the engine times every operation it queues: the
// results are those of a plain run, bit for bit; the same pass run twice
// (after a first) counts each operation exactly twice as often; every product and the
// kernels of the kind's stack appear by name; reset forgets them.
func TestGPUProfile(t *testing.T) {
	d := gpu(t)
	for _, name := range []string{"embed-2", "jm-hidden-d3", "rns-1-2-D35", "vrns-learned"} {
		c := gpuConfigs()[name]
		t.Setenv(EnvCUDAProfile, "")
		_, plain := twins(t, d, c, Float64)
		t.Setenv(EnvCUDAProfile, "1")
		_, prof := twins(t, d, c, Float64)
		p := deviceProfileOf(prof)
		if p == nil {
			t.Fatalf("%s: %s=1 and no profile", name, EnvCUDAProfile)
		}
		if deviceProfileOf(plain) != nil {
			t.Fatalf("%s: a profile without %s=1", name, EnvCUDAProfile)
		}
		batch := randomBatch(rand.New(rand.NewPCG(3, 4)), 4, 12, min(c.InputVocab, c.OutputVocab-1))
		l1, g1, err := plain.Gradient(batch)
		if err != nil {
			t.Fatal(err)
		}
		g1 = cloneGrads(g1)
		// A first pass uploads the parameters and sizes the buffers.
		if _, _, err := prof.Gradient(batch); err != nil {
			t.Fatal(err)
		}
		p.reset()
		l2, g2, err := prof.Gradient(batch)
		if err != nil {
			t.Fatal(err)
		}
		if l1 != l2 || gradcheck.TensorsErr(g2, g1) != 0 {
			t.Fatalf("%s: profiling changed the results: loss %v against %v, gradients by %g", name, l2, l1, gradcheck.TensorsErr(g2, g1))
		}
		once := map[string]int{}
		for _, r := range p.rows() {
			once[r.name] = r.calls
		}
		if _, _, err := prof.Gradient(batch); err != nil {
			t.Fatal(err)
		}
		twice := map[string]int{}
		for _, r := range p.rows() {
			twice[r.name] = r.calls
			if r.time < 0 {
				t.Errorf("%s: %s took %v", name, r.name, r.time)
			}
		}
		if len(once) == 0 {
			t.Fatalf("%s: the profile of a pass is empty", name)
		}
		for op, n := range once {
			if twice[op] != 2*n {
				t.Errorf("%s: %s ran %d times in one pass and %d in two", name, op, n, twice[op])
			}
		}
		for op := range twice {
			if _, ok := once[op]; !ok {
				t.Errorf("%s: %s ran in the second pass only", name, op)
			}
		}
		var sb strings.Builder
		if err := p.write(&sb, 2*float64(4*12), "token"); err != nil {
			t.Fatal(err)
		}
		report := sb.String()
		want := []string{"dgemm ", "total", "per token:"}
		switch c.Kind {
		case JM:
			want = append(want, "jm")
		case RNS, VRNS:
			want = append(want, "ns")
		}
		for _, w := range want {
			if !strings.Contains(report, w) {
				t.Errorf("%s: the report lacks %q:\n%s", name, w, report)
			}
		}
		if strings.Contains(report, "incomplete") {
			t.Errorf("%s: %s", name, report)
		}
		p.reset()
		if rs := p.rows(); len(rs) != 0 {
			t.Errorf("%s: %d operations after reset", name, len(rs))
		}
		if name == "rns-1-2-D35" {
			t.Logf("the profile of two passes of %s on %v:\n%s", name, d, report)
		}
	}
}
