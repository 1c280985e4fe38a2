package nskernel

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCode regenerates each generated file with its generator
// (kernels_gen.go with gen_kernels.go, vec512_12x3_amd64.s with
// gen_vec12.go) and fails when the committed file differs: a change of a
// generator must come with its output, and the output must not be edited
// by hand.
func TestGeneratedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generators with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	for _, g := range []struct{ generator, file string }{
		{"gen_kernels.go", "kernels_gen.go"},
		{"gen_vec12.go", "vec512_12x3_amd64.s"},
	} {
		out := filepath.Join(t.TempDir(), g.file)
		cmd := exec.Command(goCmd, "run", g.generator, "-o", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go run %s: %v\n%s", g.generator, err, msg)
		}
		fresh, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(g.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Fatalf("%s differs from what %s generates: run go generate ./stacks/internal/nskernel/ and commit the result", g.file, g.generator)
		}
	}
}
