package openblascheck

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// preamble is the cgo preamble of check.go, the C text before import "C".
func preamble(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("check.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start, end := strings.Index(s, "/*"), strings.Index(s, "*/\nimport \"C\"")
	if start < 0 || end < start {
		t.Fatal("check.go has no cgo preamble before import \"C\"")
	}
	return s[start+2:end] + "\nint openblascheck_unit;\n"
}

// compile runs the C compiler on src with extra flags.
func compile(t *testing.T, cc string, src string, flags ...string) (string, error) {
	cmd := exec.Command(cc, append(append([]string{"-fsyntax-only"}, flags...), "-x", "c", "-")...)
	cmd.Stdin = strings.NewReader(src)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCheckSaysWhatToInstall runs the C compiler on check.go's preamble
// with only an empty include directory, as on a machine without OpenBLAS: it must
// stop with a message naming the packages to install. Where OpenBLAS's
// headers are installed, the preamble compiles as it is.
func TestCheckSaysWhatToInstall(t *testing.T) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s): %v", cc, err)
	}
	src := preamble(t)
	out, err := compile(t, cc, src, "-nostdinc", "-I", t.TempDir())
	if err == nil {
		t.Fatalf("without headers, the preamble compiled:\n%s", out)
	}
	for _, want := range []string{"apt-get install libopenblas-dev", "openblas-devel", "brew install openblas", "without -tags openblas"} {
		if !strings.Contains(out, want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
	if _, err := compile(t, cc, "#include <openblas_config.h>\n"); err != nil {
		t.Log("OpenBLAS's headers are not installed here; the check's success case is not tested")
		return
	}
	if out, err := compile(t, cc, src); err != nil {
		t.Errorf("with OpenBLAS's headers installed, the preamble fails:\n%s", out)
	}
}
