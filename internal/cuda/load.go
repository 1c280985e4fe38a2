package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// EnvLibs is the environment variable "NSRNN_CUDA_LIBS": a colon-separated
// list of directories (or full library file paths) searched first for the
// libraries.
const EnvLibs = "NSRNN_CUDA_LIBS"

// libSpec describes one library to find.
type libSpec struct {
	key    string   // "cuda", "nvrtc" or "cublas"
	prefix string   // the start of the library's file names, e.g. "libnvrtc.so"
	names  []string // file names (sonames) in order of preference
}

var (
	cudaSpec   = libSpec{key: "cuda", prefix: "libcuda.so", names: []string{"libcuda.so.1"}}
	nvrtcSpec  = libSpec{key: "nvrtc", prefix: "libnvrtc.so", names: []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}}
	cublasSpec = libSpec{key: "cublas", prefix: "libcublas.so", names: []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}}
)

// searchPath is where the loader looks for the libraries, in order: the
// entries of env, then the plain sonames (the dynamic loader's own search)
// when sonames is set, then dirs.
type searchPath struct {
	env     []string
	sonames bool
	dirs    []string
}

// defaultSearch returns the search path from the environment.
func defaultSearch() searchPath {
	return searchPath{env: splitEnv(os.Getenv(EnvLibs)), sonames: true, dirs: systemDirs()}
}

// splitEnv splits a colon-separated list, dropping empty entries.
func splitEnv(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ":") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// systemDirs returns the directories searched after the dynamic loader.
func systemDirs() []string {
	switch runtime.GOARCH {
	case "arm64":
		return []string{
			"/usr/local/cuda/targets/sbsa-linux/lib",
			"/usr/local/cuda/targets/aarch64-linux/lib",
			"/usr/local/cuda/lib64",
			"/usr/local/nvidia/lib64",
			"/usr/lib/aarch64-linux-gnu",
		}
	default:
		return []string{
			"/usr/local/cuda/targets/x86_64-linux/lib",
			"/usr/local/cuda/lib64",
			"/usr/local/nvidia/lib64",
			"/usr/lib/x86_64-linux-gnu",
		}
	}
}

// library is a loaded shared library.
type library struct {
	path   string // the file path or soname it was loaded by
	handle uintptr
}

// notFound records a failed search for one library.
type notFound struct {
	spec  libSpec
	notes []string // load failures of files that exist
}

// open searches for the library spec. On failure it returns the record of
// the search.
func (sp searchPath) open(spec libSpec) (library, *notFound) {
	nf := &notFound{spec: spec}
	try := func(path string) (library, bool) {
		h, err := dlopen(path)
		if err != nil {
			msg := strings.TrimSpace(err.Error())
			if msg == "" {
				msg = "the loader gave no reason"
			}
			if !strings.Contains(msg, path) {
				msg = path + ": " + msg
			}
			nf.notes = append(nf.notes, msg)
			return library{}, false
		}
		return library{path: path, handle: h}, true
	}
	inDir := func(dir string) (library, bool) {
		for _, name := range spec.names {
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err != nil {
				continue
			}
			preloadCompanions(spec, dir, name)
			if lib, ok := try(path); ok {
				return lib, true
			}
		}
		return library{}, false
	}
	for _, e := range sp.env {
		fi, err := os.Stat(e)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			if lib, ok := inDir(e); ok {
				return lib, nil
			}
		case strings.HasPrefix(filepath.Base(e), spec.prefix):
			preloadCompanions(spec, filepath.Dir(e), filepath.Base(e))
			if lib, ok := try(e); ok {
				return lib, nil
			}
		}
	}
	if sp.sonames {
		for _, name := range spec.names {
			h, err := dlopen(name)
			if err == nil {
				return library{path: name, handle: h}, nil
			}
			// A name the loader does not find is no failed load; nor is
			// one whose failure it gives no reason for (some loaders say
			// nothing when the name is in none of their directories).
			if msg := strings.TrimSpace(err.Error()); msg != "" && !strings.Contains(msg, "No such file") {
				if !strings.Contains(msg, name) {
					msg = name + ": " + msg
				}
				nf.notes = append(nf.notes, msg)
			}
		}
	}
	for _, d := range sp.dirs {
		if lib, ok := inDir(d); ok {
			return lib, nil
		}
	}
	return library{}, nf
}

// preloadCompanions loads, from dir, the libraries that the library file
// name in dir loads by soname itself and that the dynamic loader might not
// find: NVRTC's builtins (libnvrtc-builtins.so.*) and cuBLAS's cuBLASLt.
// Failures are ignored: the library's own load, or its first use, reports
// them.
func preloadCompanions(spec libSpec, dir, name string) {
	var paths []string
	switch spec.key {
	case "nvrtc":
		paths, _ = filepath.Glob(filepath.Join(dir, "libnvrtc-builtins.so*"))
	case "cublas":
		if suffix, ok := strings.CutPrefix(name, "libcublas.so"); ok {
			paths = []string{filepath.Join(dir, "libcublasLt.so"+suffix)}
		}
	}
	seen := make(map[string]bool)
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		dlopen(p)
	}
}

// describe returns where sp looks, for error messages.
func (sp searchPath) describe() string {
	var where []string
	if len(sp.env) > 0 {
		where = append(where, fmt.Sprintf("%s entries %s", EnvLibs, strings.Join(sp.env, ":")))
	} else {
		where = append(where, EnvLibs+" (unset)")
	}
	if sp.sonames {
		where = append(where, "the dynamic loader's search path (ldconfig cache, LD_LIBRARY_PATH)")
	}
	where = append(where, sp.dirs...)
	return strings.Join(where, ", ")
}

// missingError returns the error for the libraries that could not be
// loaded. It wraps ErrNoLibrary.
func (sp searchPath) missingError(missing []*notFound) error {
	var libs, notes []string
	for _, m := range missing {
		libs = append(libs, fmt.Sprintf("%s (tried %s)", m.spec.names[0], strings.Join(m.spec.names, ", ")))
		notes = append(notes, m.notes...)
	}
	msg := fmt.Sprintf("%s; looked in %s", strings.Join(libs, "; "), sp.describe())
	if len(notes) > 0 {
		msg += "; failed loads: " + strings.Join(notes, "; ")
	}
	msg += fmt.Sprintf("; set %s to a colon-separated list of the directories (or files) that hold them", EnvLibs)
	return fmt.Errorf("%w: %s", ErrNoLibrary, msg)
}

// sym is one C function to resolve.
type sym struct {
	name     string
	addr     *uintptr
	optional bool
}

// resolve looks up syms in lib.
func resolve(lib library, syms []sym) error {
	var missing []string
	for _, s := range syms {
		*s.addr = dlsym(lib.handle, s.name)
		if *s.addr == 0 && !s.optional {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("cuda: %s lacks %s: the library is too old", lib.path, strings.Join(missing, ", "))
	}
	return nil
}

// driverAPI is the loaded CUDA driver library.
type driverAPI struct {
	lib library

	cuInit, cuDriverGetVersion, cuGetErrorName, cuGetErrorString          uintptr
	cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceTotalMem      uintptr
	cuDeviceGetAttribute, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRel uintptr
	cuCtxSetCurrent, cuStreamCreate, cuStreamDestroy, cuStreamSynchronize uintptr
	cuMemAlloc, cuMemFree, cuMemsetD8Async                                uintptr
	cuMemcpyHtoDAsync, cuMemcpyDtoHAsync, cuMemcpyDtoDAsync               uintptr
	cuModuleLoadData, cuModuleUnload, cuModuleGetFunction, cuLaunchKernel uintptr
	cuStreamBeginCapture, cuStreamEndCapture, cuGraphInstantiate          uintptr
	cuGraphDestroy, cuGraphLaunch, cuGraphExecDestroy                     uintptr
	// The events (optional: only profiling needs them; the elapsed time
	// is cuEventElapsedTime_v2 where the driver has it).
	cuEventCreate, cuEventDestroy, cuEventRecord, cuEventSynchronize uintptr
	cuEventElapsedTime, cuEventElapsedTimeV1                         uintptr
	// Pinned host memory (optional: QueueUploadInt32 copies through it,
	// and waits for the stream where the driver lacks it).
	cuMemHostAlloc, cuMemFreeHost uintptr
	// Ordering a second stream after the first (optional: Side needs it).
	cuStreamWaitEvent uintptr
	// Stream priorities (optional: without them both streams have the
	// default priority).
	cuStreamCreateWithPriority, cuCtxGetStreamPriorityRange uintptr
}

func (d *driverAPI) syms() []sym {
	return []sym{
		{name: "cuInit", addr: &d.cuInit},
		{name: "cuDriverGetVersion", addr: &d.cuDriverGetVersion},
		{name: "cuGetErrorName", addr: &d.cuGetErrorName},
		{name: "cuGetErrorString", addr: &d.cuGetErrorString},
		{name: "cuDeviceGetCount", addr: &d.cuDeviceGetCount},
		{name: "cuDeviceGet", addr: &d.cuDeviceGet},
		{name: "cuDeviceGetName", addr: &d.cuDeviceGetName},
		{name: "cuDeviceTotalMem_v2", addr: &d.cuDeviceTotalMem},
		{name: "cuDeviceGetAttribute", addr: &d.cuDeviceGetAttribute},
		{name: "cuDevicePrimaryCtxRetain", addr: &d.cuDevicePrimaryCtxRetain},
		{name: "cuDevicePrimaryCtxRelease_v2", addr: &d.cuDevicePrimaryCtxRel},
		{name: "cuCtxSetCurrent", addr: &d.cuCtxSetCurrent},
		{name: "cuStreamCreate", addr: &d.cuStreamCreate},
		{name: "cuStreamDestroy_v2", addr: &d.cuStreamDestroy},
		{name: "cuStreamSynchronize", addr: &d.cuStreamSynchronize},
		{name: "cuMemAlloc_v2", addr: &d.cuMemAlloc},
		{name: "cuMemFree_v2", addr: &d.cuMemFree},
		{name: "cuMemsetD8Async", addr: &d.cuMemsetD8Async},
		{name: "cuMemcpyHtoDAsync_v2", addr: &d.cuMemcpyHtoDAsync},
		{name: "cuMemcpyDtoHAsync_v2", addr: &d.cuMemcpyDtoHAsync},
		{name: "cuMemcpyDtoDAsync_v2", addr: &d.cuMemcpyDtoDAsync},
		{name: "cuModuleLoadData", addr: &d.cuModuleLoadData},
		{name: "cuModuleUnload", addr: &d.cuModuleUnload},
		{name: "cuModuleGetFunction", addr: &d.cuModuleGetFunction},
		{name: "cuLaunchKernel", addr: &d.cuLaunchKernel},
		{name: "cuStreamBeginCapture_v2", addr: &d.cuStreamBeginCapture},
		{name: "cuStreamEndCapture", addr: &d.cuStreamEndCapture},
		{name: "cuGraphInstantiateWithFlags", addr: &d.cuGraphInstantiate},
		{name: "cuGraphDestroy", addr: &d.cuGraphDestroy},
		{name: "cuGraphLaunch", addr: &d.cuGraphLaunch},
		{name: "cuGraphExecDestroy", addr: &d.cuGraphExecDestroy},
		{name: "cuEventCreate", addr: &d.cuEventCreate, optional: true},
		{name: "cuEventDestroy_v2", addr: &d.cuEventDestroy, optional: true},
		{name: "cuEventRecord", addr: &d.cuEventRecord, optional: true},
		{name: "cuEventSynchronize", addr: &d.cuEventSynchronize, optional: true},
		{name: "cuEventElapsedTime_v2", addr: &d.cuEventElapsedTime, optional: true},
		{name: "cuEventElapsedTime", addr: &d.cuEventElapsedTimeV1, optional: true},
		{name: "cuMemHostAlloc", addr: &d.cuMemHostAlloc, optional: true},
		{name: "cuMemFreeHost", addr: &d.cuMemFreeHost, optional: true},
		{name: "cuStreamWaitEvent", addr: &d.cuStreamWaitEvent, optional: true},
		{name: "cuStreamCreateWithPriority", addr: &d.cuStreamCreateWithPriority, optional: true},
		{name: "cuCtxGetStreamPriorityRange", addr: &d.cuCtxGetStreamPriorityRange, optional: true},
	}
}

// check turns a CUresult into an error.
func (d *driverAPI) check(fn string, r uintptr) error {
	code := status(r)
	if code == 0 {
		return nil
	}
	e := &Error{Lib: "cuda", Func: fn, Code: code}
	s := new(uintptr)
	if status(ccall(d.cuGetErrorName, uintptr(uint32(code)), uintptr(unsafe.Pointer(s)))) == 0 {
		e.Name = goString(*s)
	} else {
		e.Name = fmt.Sprintf("CUresult(%d)", code)
	}
	*s = 0
	if status(ccall(d.cuGetErrorString, uintptr(uint32(code)), uintptr(unsafe.Pointer(s)))) == 0 {
		e.Msg = goString(*s)
	}
	return e
}

// nvrtcAPI is the loaded NVRTC library.
type nvrtcAPI struct {
	lib library
	mu  sync.Mutex // serializes compilations

	nvrtcVersion, nvrtcGetErrorString, nvrtcCreateProgram, nvrtcDestroyProgram uintptr
	nvrtcCompileProgram, nvrtcGetPTXSize, nvrtcGetPTX                          uintptr
	nvrtcGetProgramLogSize, nvrtcGetProgramLog                                 uintptr
}

func (n *nvrtcAPI) syms() []sym {
	return []sym{
		{name: "nvrtcVersion", addr: &n.nvrtcVersion},
		{name: "nvrtcGetErrorString", addr: &n.nvrtcGetErrorString},
		{name: "nvrtcCreateProgram", addr: &n.nvrtcCreateProgram},
		{name: "nvrtcDestroyProgram", addr: &n.nvrtcDestroyProgram},
		{name: "nvrtcCompileProgram", addr: &n.nvrtcCompileProgram},
		{name: "nvrtcGetPTXSize", addr: &n.nvrtcGetPTXSize},
		{name: "nvrtcGetPTX", addr: &n.nvrtcGetPTX},
		{name: "nvrtcGetProgramLogSize", addr: &n.nvrtcGetProgramLogSize},
		{name: "nvrtcGetProgramLog", addr: &n.nvrtcGetProgramLog},
	}
}

// check turns an nvrtcResult into an *Error (nil on success).
func (n *nvrtcAPI) check(fn string, r uintptr) *Error {
	code := status(r)
	if code == 0 {
		return nil
	}
	e := &Error{Lib: "nvrtc", Func: fn, Code: code}
	e.Name = goString(ccall(n.nvrtcGetErrorString, uintptr(uint32(code))))
	if e.Name == "" {
		e.Name = fmt.Sprintf("nvrtcResult(%d)", code)
	}
	return e
}

// cublasAPI is the loaded cuBLAS library.
type cublasAPI struct {
	lib library

	cublasCreate, cublasDestroy, cublasSetStream uintptr
	cublasDgemm, cublasSgemm                     uintptr
	cublasGetStatusString                        uintptr // optional (cuBLAS 11.4.2 on)
}

func (b *cublasAPI) syms() []sym {
	return []sym{
		{name: "cublasCreate_v2", addr: &b.cublasCreate},
		{name: "cublasDestroy_v2", addr: &b.cublasDestroy},
		{name: "cublasSetStream_v2", addr: &b.cublasSetStream},
		{name: "cublasDgemm_v2", addr: &b.cublasDgemm},
		{name: "cublasSgemm_v2", addr: &b.cublasSgemm},
		{name: "cublasGetStatusString", addr: &b.cublasGetStatusString, optional: true},
	}
}

// check turns a cublasStatus_t into an error.
func (b *cublasAPI) check(fn string, r uintptr) error {
	code := status(r)
	if code == 0 {
		return nil
	}
	e := &Error{Lib: "cublas", Func: fn, Code: code, Name: cublasStatusName(code)}
	if b.cublasGetStatusString != 0 {
		e.Msg = goString(ccall(b.cublasGetStatusString, uintptr(uint32(code))))
	}
	return e
}

// api is one library's table of functions (driverAPI, nvrtcAPI,
// cublasAPI).
type api interface {
	syms() []sym
	setLib(library)
}

func (d *driverAPI) setLib(l library) { d.lib = l }
func (n *nvrtcAPI) setLib(l library)  { n.lib = l }
func (b *cublasAPI) setLib(l library) { b.lib = l }

// openAPI loads the library of spec and resolves its table of functions.
func openAPI[T any, P interface {
	*T
	api
}](sp searchPath, spec libSpec) (P, *notFound, error) {
	lib, nf := sp.open(spec)
	if nf != nil {
		return nil, nf, nil
	}
	a := P(new(T))
	a.setLib(lib)
	if err := resolve(lib, a.syms()); err != nil {
		return nil, nil, err
	}
	return a, nil, nil
}

// openDriver loads and resolves libcuda.
func openDriver(sp searchPath) (*driverAPI, *notFound, error) {
	return openAPI[driverAPI](sp, cudaSpec)
}

// openNVRTC loads and resolves NVRTC.
func openNVRTC(sp searchPath) (*nvrtcAPI, *notFound, error) {
	return openAPI[nvrtcAPI](sp, nvrtcSpec)
}

// openCublas loads and resolves cuBLAS.
func openCublas(sp searchPath) (*cublasAPI, *notFound, error) {
	return openAPI[cublasAPI](sp, cublasSpec)
}

// openOne opens one library with open, adding to missing or errs where
// that fails; it returns nil then.
func openOne[T any](open func(searchPath) (*T, *notFound, error), sp searchPath, missing *[]*notFound, errs *[]error) *T {
	a, nf, err := open(sp)
	switch {
	case nf != nil:
		*missing = append(*missing, nf)
	case err != nil:
		*errs = append(*errs, err)
	default:
		return a
	}
	return nil
}

// loader holds the libraries loaded so far. The package uses one, state;
// tests make fresh ones.
type loader struct {
	mu     sync.Mutex
	driver *driverAPI // set once libcuda is loaded, even if cuInit failed
	nvrtc  *nvrtcAPI
	cublas *cublasAPI

	loadDone  bool // Load has run; loadErr is its result
	loadErr   error
	nvrtcDone bool // LoadNVRTC has run; nvrtcErr is its result
	nvrtcErr  error
}

// state is the process's loader.
var state loader

// load loads every library not yet loaded from sp and initializes the
// driver.
func (l *loader) load(sp searchPath) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loadDone {
		return l.loadErr
	}
	l.loadDone = true
	l.loadErr = l.loadLocked(sp)
	return l.loadErr
}

func (l *loader) loadLocked(sp searchPath) error {
	if platformErr != nil {
		return platformErr
	}
	var (
		missing []*notFound
		errs    []error
	)
	if l.driver == nil {
		l.driver = openOne(openDriver, sp, &missing, &errs)
	}
	if l.nvrtc == nil {
		l.nvrtc = openOne(openNVRTC, sp, &missing, &errs)
	}
	if l.cublas == nil {
		l.cublas = openOne(openCublas, sp, &missing, &errs)
	}
	if len(missing) > 0 {
		errs = append([]error{sp.missingError(missing)}, errs...)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	d := l.driver
	return d.check("cuInit", ccall(d.cuInit, 0))
}

// loadNVRTC loads NVRTC from sp unless it is loaded. When remember is
// set, the result is kept for later calls.
func (l *loader) loadNVRTC(sp searchPath, remember bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nvrtc != nil {
		return nil
	}
	if remember && l.nvrtcDone {
		return l.nvrtcErr
	}
	err := func() error {
		if platformErr != nil {
			return platformErr
		}
		n, nf, err := openNVRTC(sp)
		if nf != nil {
			return sp.missingError([]*notFound{nf})
		}
		if err != nil {
			return err
		}
		l.nvrtc = n
		return nil
	}()
	if remember {
		l.nvrtcDone, l.nvrtcErr = true, err
	}
	return err
}

// Load loads the CUDA driver (libcuda.so.1), NVRTC (libnvrtc.so.13, .12,
// then .11.2) and cuBLAS (libcublas.so.13, .12, then .11), and calls
// cuInit(0). It does so once per process: later calls return the first
// call's error.
//
// Each library is searched for in the entries of the EnvLibs environment
// variable, then by its plain soname (the dynamic loader's own search:
// the ldconfig cache, LD_LIBRARY_PATH), then in the CUDA toolkit and
// system directories (/usr/local/cuda/targets/x86_64-linux/lib,
// /usr/local/cuda/lib64, /usr/local/nvidia/lib64,
// /usr/lib/x86_64-linux-gnu). When any is missing, the error names each
// missing library, the names tried and where the search looked, and
// wraps ErrNoLibrary. On other systems than Linux, Load returns an error
// wrapping ErrNoLibrary.
func Load() error {
	return state.load(defaultSearch())
}

// LoadNVRTC loads NVRTC alone, searching as Load does. It needs no
// driver, so that kernels can be compiled on a machine without a GPU. It
// does nothing if NVRTC is loaded already; a failure is remembered like
// Load's.
func LoadNVRTC() error {
	return state.loadNVRTC(defaultSearch(), true)
}

// LoadNVRTCFrom loads NVRTC from the directory dir only, first loading
// the NVRTC builtins library found there (libnvrtc-builtins.so.*). It
// does nothing if NVRTC is loaded already, from anywhere. It is meant for
// tests that compile kernels on machines without CUDA, given a directory
// that holds an unpacked NVRTC (see the package documentation). Unlike
// LoadNVRTC's, its failures are not remembered.
func LoadNVRTCFrom(dir string) error {
	if dir == "" {
		return fmt.Errorf("%w: LoadNVRTCFrom: no directory given", ErrNoLibrary)
	}
	return state.loadNVRTC(searchPath{env: []string{dir}}, false)
}

// NVRTCVersion returns the version of the loaded NVRTC (nvrtcVersion).
// NVRTC must have been loaded by LoadNVRTC, LoadNVRTCFrom or Load.
func NVRTCVersion() (major, minor int, err error) {
	n, err := loadedNVRTC()
	if err != nil {
		return 0, 0, err
	}
	maj, min := new(int32), new(int32)
	if e := n.check("nvrtcVersion", ccall(n.nvrtcVersion, uintptr(unsafe.Pointer(maj)), uintptr(unsafe.Pointer(min)))); e != nil {
		return 0, 0, e
	}
	return int(*maj), int(*min), nil
}

// loadedNVRTC returns the loaded NVRTC.
func loadedNVRTC() (*nvrtcAPI, error) {
	state.mu.Lock()
	n := state.nvrtc
	state.mu.Unlock()
	if n == nil {
		return nil, errors.New("cuda: NVRTC is not loaded: call LoadNVRTC, LoadNVRTCFrom or Load first")
	}
	return n, nil
}

// DriverVersion returns the CUDA version the driver supports
// (cuDriverGetVersion), e.g. 13, 0. It calls Load, and succeeds when the
// driver library is loaded even if another library is missing or cuInit
// failed.
func DriverVersion() (major, minor int, err error) {
	lerr := Load()
	state.mu.Lock()
	d := state.driver
	state.mu.Unlock()
	if d == nil {
		return 0, 0, lerr
	}
	v := new(int32)
	if err := d.check("cuDriverGetVersion", ccall(d.cuDriverGetVersion, uintptr(unsafe.Pointer(v)))); err != nil {
		return 0, 0, err
	}
	return int(*v) / 1000, int(*v) % 1000 / 10, nil
}

// Libraries returns the file paths (or, when the dynamic loader found
// them, the sonames) of the loaded libraries, keyed by "cuda", "nvrtc"
// and "cublas", for logs. Libraries not loaded are absent.
func Libraries() map[string]string {
	state.mu.Lock()
	defer state.mu.Unlock()
	m := make(map[string]string)
	if state.driver != nil {
		m["cuda"] = state.driver.lib.path
	}
	if state.nvrtc != nil {
		m["nvrtc"] = state.nvrtc.lib.path
	}
	if state.cublas != nil {
		m["cublas"] = state.cublas.lib.path
	}
	return m
}

// loadedAPIs returns the driver and cuBLAS after a successful Load.
func loadedAPIs() (*driverAPI, *cublasAPI, error) {
	if err := Load(); err != nil {
		return nil, nil, err
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.driver, state.cublas, nil
}
