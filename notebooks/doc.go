// Package notebooks holds the project's Jupyter notebooks, which run on the
// GoNB kernel (github.com/janpfeifer/gonb), their versions for the
// gophernotes kernel (github.com/gopherdata/gophernotes), generated from
// them, and the tests that execute both headlessly with jupyter nbconvert.
// It has no Go API: README.md in this directory tells how to set the
// notebooks up and open them.
package notebooks
