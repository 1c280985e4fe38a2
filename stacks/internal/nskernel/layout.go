package nskernel

// layout is the block layout that every instance of the dynamic program
// shares: the fast sum-product program of the stacks (seq) and the
// program in any semiring (Program), whose max-plus instance is the
// decoding (Viterbi).
//
// Positions. The columns of γ are indexed by positions: for the original
// bottom, position 0 is time 0 and step t makes position t; for the fixed
// bottom, position 0 is the extra row i = −1, position 1 is time 0 (γ[−1→0]
// one-hot at (0,0)→(0,0)) and step t makes position t+1 (see the package
// documentation). A window D keeps the γ blocks (a,b) with b − a ≤ D.
//
// Blocks. γ block (a,b), lo(b) ≤ a < b, has index blk(a,b): the blocks of
// row a lie contiguously by column, so that the split points k of the pop
// contraction of (a,b) are the consecutive blocks (a,a+1) … (a,b−2). γ′
// block (k,b), lo(b) < k ≤ b−2, has index gp(k,b): the blocks of column b
// lie contiguously by k, matching them.
type layout struct {
	D      int  // window in positions (capPos for unlimited)
	fixed  bool // the fixed bottom
	capPos int  // positions
	np     int  // positions filled
	base   int  // step t makes position base+t

	rowStart []int // block index of (a, a+1)
	colStart []int // γ′ index of (lo(b)+1, b)
}

// initLayout sets up the layout of capPos positions for window (0:
// unlimited) and returns the numbers of γ and γ′ blocks.
func (l *layout) initLayout(window, capPos int, fixed bool) (nb, ng int) {
	l.fixed, l.capPos = fixed, capPos
	l.D = window
	if l.D == 0 {
		l.D = capPos
	}
	l.rowStart = make([]int, capPos+1)
	for a := 0; a < capPos; a++ {
		l.rowStart[a] = nb
		nb += min(l.D, capPos-1-a)
	}
	l.rowStart[capPos] = nb
	l.colStart = make([]int, capPos+1)
	for b := 0; b < capPos; b++ {
		l.colStart[b] = ng
		if klo := l.lo(b) + 1; b-2 >= klo {
			ng += b - 1 - klo
		}
	}
	l.colStart[capPos] = ng
	return nb, ng
}

// capPositionsFrom returns the positions a run of up to maxSteps steps
// needs, from a carried state (capPositions) or, without one, from the
// initial stack: then no more than the unlimited stack's, whatever the
// window.
func capPositionsFrom(window, maxSteps int, carried bool) int {
	if !carried {
		return maxSteps + 2
	}
	return capPositions(window, maxSteps)
}

// capPositions returns the positions a run of up to maxSteps steps needs
// (from the initial stack, or from a carried state of up to window
// positions).
func capPositions(window, maxSteps int) int {
	if window > 0 {
		return maxSteps + max(2, window)
	}
	return maxSteps + 2
}

// startPositions sets np and base for a run from the initial stack: one
// position (time 0) for the original bottom, two (the row i = −1 and time
// 0) for the fixed one.
func (l *layout) startPositions() {
	l.np = 1
	if l.fixed {
		l.np = 2
	}
	l.base = l.np - 1
}

// lo is the first row of column b.
func (l *layout) lo(b int) int { return max(0, b-l.D) }

// blk is the index of γ block (a,b).
func (l *layout) blk(a, b int) int { return l.rowStart[a] + b - a - 1 }

// gp is the index of γ′ block (k,b).
func (l *layout) gp(k, b int) int { return l.colStart[b] + k - (l.lo(b) + 1) }

// splitActions writes the actions of one column from the external layout
// ld (for each configuration (q,x), in row q·|Γ|+x, the push weights for
// every (r,y), index r·|Γ|+y, then the replace weights, then the pop
// weights for every r) into push and rep (m×m) and pop (m×|Q|) in the
// internal order, configuration (q,x) at x·|Q|+q.
func splitActions[V any](ld, push, rep, pop []V, Q, G int) {
	m := Q * G
	W := 2*m + Q
	for q := 0; q < Q; q++ {
		for x := 0; x < G; x++ {
			row := ld[(q*G+x)*W : (q*G+x+1)*W]
			i := x*Q + q
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					push[i*m+y*Q+r] = row[r*G+y]
					rep[i*m+y*Q+r] = row[m+r*G+y]
				}
				pop[i*Q+r] = row[2*m+r]
			}
		}
	}
}
