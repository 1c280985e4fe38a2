// Package notebooks holds the project's Jupyter notebooks, which run on the
// GoNB kernel (github.com/janpfeifer/gonb), and the test that executes them
// headlessly with jupyter nbconvert. It has no Go API: README.md in this
// directory tells how to set the notebooks up and open them.
package notebooks
