package nsrnn

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadCheckpointModels reads arbitrary bytes as a checkpoint file of
// the current format or of version 3, with a valid SHA-256 checksum (a
// crafted file fixes it): the checksum is recomputed here, so that the
// fuzzer's mutations reach the sections, the training state's gob and the
// models rather than stopping at the checksum, as FuzzDecodeCheckpoint's
// mostly do. LoadCheckpointModels returns models that run, or an error
// naming the file; the optimizer's sections decode or are refused; never
// a panic. The seeds are small checkpoints of the current format (not the
// files of testdata, so large that the fuzzer would spend its time
// minimizing them).
func FuzzLoadCheckpointModels(f *testing.F) {
	path := filepath.Join(f.TempDir(), "ckpt")
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 2}, 1)
	if err != nil {
		f.Fatal(err)
	}
	opt := NewAdam(0.1, m.paramSizes())
	for _, st := range []*trainState{
		{Settings: map[string]string{}},
		{Settings: map[string]string{"a": "b"}, Epoch: 1, BestEpoch: 1, History: []EpochRecord{{Epoch: 1}}},
	} {
		if err := saveCheckpoint(path, m, opt, &constObjective{}, st); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:len(b)-sha256.Size])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := sha256.Sum256(body)
		data := append(bytes.Clone(body), sum[:]...)
		path := filepath.Join(t.TempDir(), "ckpt")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cm, err := LoadCheckpointModels(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		exercise(cm.Model)
		if cm.Best != nil {
			exercise(cm.Best)
		}
		st, err := decodeCheckpoint(data)
		if err != nil {
			t.Fatalf("LoadCheckpointModels read what decodeCheckpoint refuses: %v", err)
		}
		NewAdam(0.1, cm.Model.paramSizes()).UnmarshalBinary(st.Optimizer)
		NewSGD(0.1).UnmarshalBinary(st.Optimizer)
	})
}
