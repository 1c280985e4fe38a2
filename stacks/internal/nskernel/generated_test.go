package nskernel

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCode regenerates kernels_gen.go with gen_kernels.go and
// fails when the committed file differs: a change of the generator must
// come with its output, and the output must not be edited by hand.
func TestGeneratedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not on PATH: %v", err)
	}
	out := filepath.Join(t.TempDir(), "kernels_gen.go")
	cmd := exec.Command(goCmd, "run", "gen_kernels.go", "-o", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run gen_kernels.go: %v\n%s", err, msg)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("kernels_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("kernels_gen.go differs from what gen_kernels.go generates: run go generate ./stacks/internal/nskernel/ and commit the result")
	}
}
