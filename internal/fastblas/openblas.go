//go:build openblas

package fastblas

// #cgo LDFLAGS: -lopenblas
// char* openblas_get_corename(void);
// int openblas_get_num_threads(void);
// void openblas_set_num_threads(int);
import "C"

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"

	// Fails the build early, saying what to install, without OpenBLAS.
	_ "github.com/nsrnn/nsrnn/internal/fastblas/openblascheck"
)

// Name is the BLAS implementation in use.
const Name = "openblas"

// Core is the CPU kernel OpenBLAS chose.
var Core = C.GoString(C.openblas_get_corename())

func init() {
	retarget()
	blas64.Use(netlib.Implementation{})
	blas32.Use(netlib.Implementation{})
}

// retarget sets two OpenBLAS settings that can only be chosen before the
// library loads, through environment variables, by re-executing the process
// once with them set; a variable you set yourself is left alone.
//
// OPENBLAS_CORETYPE works around OpenBLAS's CPU detection on virtual
// machines whose CPUID hides the model (common in the cloud): OpenBLAS then
// falls back to its generic "Prescott" kernels, several times slower than
// the AVX-512 or AVX2 ones the CPU supports.
//
// OPENBLAS_THREAD_TIMEOUT=4 makes OpenBLAS's worker threads sleep as soon
// as a product is done instead of spinning for about 2²⁸ cycles: nsrnn
// alternates products with Go code (the softmax, the stacks) that runs on
// the same cores, and the spinning threads took a third of the CPU time of
// a Penn Treebank training step (measured: 8% more tokens per second).
func retarget() {
	var env []string
	if os.Getenv("OPENBLAS_THREAD_TIMEOUT") == "" {
		env = append(env, "OPENBLAS_THREAD_TIMEOUT=4")
	}
	if Core == "Prescott" && os.Getenv("OPENBLAS_CORETYPE") == "" {
		switch {
		case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL:
			env = append(env, "OPENBLAS_CORETYPE=SkylakeX")
		case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
			env = append(env, "OPENBLAS_CORETYPE=Haswell")
		}
	}
	if len(env) == 0 {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, append(os.Environ(), env...)) // returns only on failure: keep the defaults
}

var single struct {
	sync.Mutex
	holders int
	prev    int
}

// SingleThreaded makes OpenBLAS run every product on its calling thread
// until the function it returns is called, which restores its former
// thread count when no other holder remains. A program that splits its
// products among goroutines itself holds it, so that OpenBLAS's own
// threads do not compete with them for the cores. The setting is the
// process's: every product of every goroutine runs single-threaded while
// it is held. (An OpenBLAS built for OpenMP, rather than the pthreads
// build of Debian's libopenblas0-pthread, takes its thread count from
// the calling OS thread's OpenMP setting, which a goroutine does not keep
// between calls; there the hold may not reach every product.)
func SingleThreaded() (release func()) {
	single.Lock()
	if single.holders == 0 {
		single.prev = int(C.openblas_get_num_threads())
		if single.prev != 1 {
			C.openblas_set_num_threads(1)
		}
	}
	single.holders++
	single.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			single.Lock()
			single.holders--
			if single.holders == 0 && single.prev != 1 {
				C.openblas_set_num_threads(C.int(single.prev))
			}
			single.Unlock()
		})
	}
}

// Threads returns the number of threads OpenBLAS runs a product on.
func Threads() int { return int(C.openblas_get_num_threads()) }
