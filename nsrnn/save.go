package nsrnn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// The saved model format, version 1, little-endian:
//
//	magic "nsrnn-model\x00"
//	uint32 version
//	uint32 length, then the configuration as JSON
//	uint32 number of parameters, then for each:
//	    uint32 name length, name, uint32 rank, rank × uint32 dims,
//	    the float64 values
//	uint32 CRC-32 (IEEE) of everything before it
const (
	modelMagic   = "nsrnn-model\x00"
	modelVersion = 1
)

// ErrBadModelFile is wrapped by every error about a malformed saved model.
var ErrBadModelFile = errors.New("not a valid nsrnn model file")

// MarshalBinary encodes the model's configuration and parameters.
func (m *Model) MarshalBinary() ([]byte, error) {
	if err := m.syncHost(); err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(m.cfg)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(modelMagic)
	u32 := func(v int) { binary.Write(&b, binary.LittleEndian, uint32(v)) }
	u32(modelVersion)
	u32(len(cfg))
	b.Write(cfg)
	u32(len(m.params))
	for _, p := range m.params {
		u32(len(p.Name))
		b.WriteString(p.Name)
		shape := p.Value.Shape()
		u32(len(shape))
		for _, d := range shape {
			u32(d)
		}
		buf := make([]byte, 8*p.Size())
		for i, v := range p.Data() {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
		}
		b.Write(buf)
	}
	u32(int(crc32.ChecksumIEEE(b.Bytes())))
	return b.Bytes(), nil
}

// UnmarshalModel decodes a model written by MarshalBinary. A truncated,
// corrupted or inconsistent encoding, or a parameter that is not finite,
// is an error wrapping ErrBadModelFile.
func UnmarshalModel(data []byte) (*Model, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadModelFile, fmt.Sprintf(format, args...))
	}
	if len(data) < len(modelMagic)+8 || string(data[:len(modelMagic)]) != modelMagic {
		return nil, bad("missing header")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, bad("checksum mismatch (truncated or corrupted)")
	}
	r := body[len(modelMagic):]
	u32 := func() (int, bool) {
		if len(r) < 4 {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(r)
		r = r[4:]
		return int(v), true
	}
	take := func(n int) ([]byte, bool) {
		if n < 0 || n > len(r) {
			return nil, false
		}
		b := r[:n]
		r = r[n:]
		return b, true
	}
	version, _ := u32()
	if version != modelVersion {
		return nil, bad("format version %d, this library reads version %d", version, modelVersion)
	}
	n, ok := u32()
	cfgJSON, ok2 := take(n)
	if !ok || !ok2 {
		return nil, bad("truncated configuration")
	}
	var cfg Config
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return nil, bad("configuration: %v", err)
	}
	m, err := build(cfg)
	if err != nil {
		return nil, bad("%v", err)
	}
	count, ok := u32()
	if !ok || count != len(m.params) {
		return nil, bad("%d parameters, the configuration has %d", count, len(m.params))
	}
	for _, p := range m.params {
		l, ok := u32()
		name, ok2 := take(l)
		if !ok || !ok2 {
			return nil, bad("truncated parameter name")
		}
		if string(name) != p.Name {
			return nil, bad("parameter %q where %q was expected", name, p.Name)
		}
		rank, ok := u32()
		shape := p.Value.Shape()
		if !ok || rank != len(shape) {
			return nil, bad("parameter %s has rank %d, want %d", p.Name, rank, len(shape))
		}
		for i := range shape {
			d, ok := u32()
			if !ok || d != shape[i] {
				return nil, bad("parameter %s has the wrong shape (want %v)", p.Name, shape)
			}
		}
		vals, ok := take(8 * p.Size())
		if !ok {
			return nil, bad("truncated values of %s", p.Name)
		}
		dst := p.Data()
		for i := range dst {
			v := math.Float64frombits(binary.LittleEndian.Uint64(vals[8*i:]))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, bad("parameter %s holds %g at index %d: a model's parameters are finite", p.Name, v, i)
			}
			dst[i] = v
		}
	}
	if len(r) != 0 {
		return nil, bad("%d unexpected bytes after the parameters", len(r))
	}
	return m, nil
}

// Save writes the model to path atomically.
func (m *Model) Save(path string) error {
	data, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, data)
}

// maxModelFileBytes bounds the size of a model file that Load reads: the
// parameters of the largest model (MaxParams) and room for the rest.
const maxModelFileBytes = 8*MaxParams + 64<<20

// Load reads a model saved by Save. Errors name the file; a file that is
// not a regular file, or is larger than the largest model's, is refused
// before it is read.
func Load(path string) (*Model, error) {
	data, err := readlimit.File(path, maxModelFileBytes, true)
	if err != nil {
		return nil, err
	}
	m, err := UnmarshalModel(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
