package cuda

import (
	"bytes"
	"runtime"
	"unsafe"
)

// CompilePTX compiles the CUDA C source src to PTX with NVRTC, for the
// virtual architecture arch, e.g. "compute_90" (NVRTC's option
// --gpu-architecture; an empty arch leaves NVRTC's default), with the
// further NVRTC options opts, e.g. "-DREAL=double". No option is added
// by default: --use_fast_math, for one, must be asked for. name is the
// program's file name, used in NVRTC's messages. A compilation error is
// an *Error whose Log is NVRTC's log. NVRTC must have been loaded by
// LoadNVRTC, LoadNVRTCFrom or Load. The returned PTX has no terminating
// NUL.
func CompilePTX(src, name, arch string, opts ...string) ([]byte, error) {
	n, err := loadedNVRTC()
	if err != nil {
		return nil, err
	}
	return n.compile(src, name, arch, opts)
}

func (n *nvrtcAPI) compile(src, name, arch string, opts []string) ([]byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()

	csrc, cname := cString(src), cString(name)
	prog := new(uintptr)
	r := ccall(n.nvrtcCreateProgram, uintptr(unsafe.Pointer(prog)), uintptr(unsafe.Pointer(&csrc[0])), uintptr(unsafe.Pointer(&cname[0])), 0, 0, 0)
	runtime.KeepAlive(csrc)
	runtime.KeepAlive(cname)
	if e := n.check("nvrtcCreateProgram", r); e != nil {
		return nil, e
	}
	defer func() { ccall(n.nvrtcDestroyProgram, uintptr(unsafe.Pointer(prog))) }()

	var all []string
	if arch != "" {
		all = append(all, "--gpu-architecture="+arch)
	}
	all = append(all, opts...)
	bufs := make([][]byte, len(all))
	ptrs := make([]*byte, len(all)+1) // never empty, so &ptrs[0] is valid
	for i, o := range all {
		bufs[i] = cString(o)
		ptrs[i] = &bufs[i][0]
	}
	r = ccall(n.nvrtcCompileProgram, *prog, uintptr(len(all)), uintptr(unsafe.Pointer(&ptrs[0])))
	runtime.KeepAlive(bufs)
	runtime.KeepAlive(ptrs)
	if e := n.check("nvrtcCompileProgram", r); e != nil {
		e.Log = n.log(*prog)
		return nil, e
	}

	size := new(uintptr)
	if e := n.check("nvrtcGetPTXSize", ccall(n.nvrtcGetPTXSize, *prog, uintptr(unsafe.Pointer(size)))); e != nil {
		return nil, e
	}
	ptx := make([]byte, *size+1)
	if e := n.check("nvrtcGetPTX", ccall(n.nvrtcGetPTX, *prog, uintptr(unsafe.Pointer(&ptx[0])))); e != nil {
		return nil, e
	}
	if i := bytes.IndexByte(ptx, 0); i >= 0 {
		ptx = ptx[:i]
	}
	return ptx, nil
}

// log returns the program's compilation log, or "" if it cannot be had.
func (n *nvrtcAPI) log(prog uintptr) string {
	size := new(uintptr)
	if n.check("nvrtcGetProgramLogSize", ccall(n.nvrtcGetProgramLogSize, prog, uintptr(unsafe.Pointer(size)))) != nil || *size == 0 {
		return ""
	}
	buf := make([]byte, *size+1)
	if n.check("nvrtcGetProgramLog", ccall(n.nvrtcGetProgramLog, prog, uintptr(unsafe.Pointer(&buf[0])))) != nil {
		return ""
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}
