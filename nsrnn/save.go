package nsrnn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
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

// MarshalBinary encodes the model's configuration and parameters. A model
// with a parameter that is not finite (diverged) is refused, as Load would
// refuse its file. Like Init, it waits for a computation that another
// goroutine has under way to end (Fit's updates included), so that the
// parameters it encodes are those of one step; it does not hold the
// model, so that training beside it goes on.
func (m *Model) MarshalBinary() ([]byte, error) {
	m.mustBeMade()
	var b bytes.Buffer
	var err error
	m.readParams(func() { err = m.writeModel(&b) })
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeModel writes the encoding of MarshalBinary to w, in pieces of a
// bounded size: the extra memory it takes does not grow with the model.
func (m *Model) writeModel(w io.Writer) error {
	m.mustBeMade()
	if err := m.syncHost(); err != nil {
		return err
	}
	if err := m.checkFinite("cannot save"); err != nil {
		return err
	}
	return m.encode(w)
}

// encode writes the encoding of the host's parameters, finite or not (a
// test makes a file of a diverged model with it).
func (m *Model) encode(w io.Writer) error {
	cfg, err := json.Marshal(m.cfg)
	if err != nil {
		return err
	}
	if g, ok := w.(interface{ Grow(int) }); ok {
		g.Grow(m.encodedSize(len(cfg)))
	}
	crc := crc32.NewIEEE()
	out := io.MultiWriter(w, crc)
	const chunk = 1 << 13 // values per piece
	buf := make([]byte, 0, 8*chunk)
	u32 := func(v int) { buf = binary.LittleEndian.AppendUint32(buf, uint32(v)) }
	flush := func() error {
		_, err := out.Write(buf)
		buf = buf[:0]
		return err
	}
	buf = append(buf, modelMagic...)
	u32(modelVersion)
	u32(len(cfg))
	buf = append(buf, cfg...)
	u32(len(m.params))
	for _, p := range m.params {
		u32(len(p.Name))
		buf = append(buf, p.Name...)
		shape := p.Value.Shape()
		u32(len(shape))
		for _, d := range shape {
			u32(d)
		}
		for _, v := range p.Data() {
			if len(buf)+8 > cap(buf) {
				if err := flush(); err != nil {
					return err
				}
			}
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	}
	if err := flush(); err != nil {
		return err
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], crc.Sum32())
	_, err = w.Write(sum[:])
	return err
}

// encodedSize is the length of the model's encoding, given that of its
// configuration's JSON.
func (m *Model) encodedSize(cfgLen int) int {
	n := len(modelMagic) + 4 + 4 + cfgLen + 4 + 4
	for _, p := range m.params {
		n += 4 + len(p.Name) + 4 + 4*len(p.Value.Shape()) + 8*p.Size()
	}
	return n
}

// UnmarshalModel decodes a model written by MarshalBinary. A truncated,
// corrupted or inconsistent encoding, or a parameter that is not finite,
// is an error wrapping ErrBadModelFile; a model of a kind that no one
// registered in this program, one wrapping ErrUnknownKind.
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
	// The values must be there before the model is made: a configuration
	// of billions of parameters in a file of a few bytes is refused
	// without allocating them.
	np, err := CountParams(cfg)
	if errors.Is(err, ErrUnknownKind) {
		// Not damage: the program has not registered the kind (a kind
		// defined outside this package registers when its package is
		// imported).
		return nil, &prefixedError{fmt.Sprintf("nsrnn: a model of kind %q, which this program has not registered (import the package that defines it): ", cfg.Kind), err}
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	if np > len(r)/8 {
		return nil, bad("the configuration has %d parameter values, the file holds at most %d", np, len(r)/8)
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

// Save writes the model to path atomically, streaming its encoding (the
// memory it takes besides the model's does not grow with the model). It
// refuses a model that MarshalBinary refuses, and waits as it does.
func (m *Model) Save(path string) error {
	m.mustBeMade()
	var err error
	m.readParams(func() { err = atomicfile.Write(path, m.writeModel) })
	return err
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
