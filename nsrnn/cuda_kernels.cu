// CUDA kernels of the GPU engine (engine_cuda.go), compiled at run time by
// NVRTC, once per process and precision: REAL is double for Float64 and
// float for Float32. The layouts are the CPU's: row-major matrices, rows of
// the gathered positions indexed t·B + b, the LSTM's gates in PyTorch's
// order i, f, g, o. Reductions run in a fixed order (no atomics), so that a
// pass gives the same bits every time.

typedef REAL real;

#define BLOCK 256

__device__ __forceinline__ real sigm(real x) { return (real)1 / ((real)1 + exp(-x)); }

// Block-wide sum of double values, in a fixed order; every thread gets it.
__device__ double block_sum(double v, double* sh) {
	int t = threadIdx.x;
	sh[t] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s) sh[t] += sh[t + s];
		__syncthreads();
	}
	double r = sh[0];
	__syncthreads();
	return r;
}

// Block-wide maximum.
__device__ double block_max(double v, double* sh) {
	int t = threadIdx.x;
	sh[t] = v;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s) sh[t] = fmax(sh[t], sh[t + s]);
		__syncthreads();
	}
	double r = sh[0];
	__syncthreads();
	return r;
}

// The group kernels below compute each output with a group of W
// consecutive threads (a warp, or an aligned part of one), which split its
// terms and combine them with warp shuffles: the NS dynamic program's
// reductions run over up to Dw·|Q||Γ| terms for few outputs, which one
// thread per output leaves to a few hundred threads of the card. The
// launch has W threads per output; under the emulator (GPUEMU, threads run
// one after another) lane 0 alone does the whole reduction. The butterfly
// gives every lane the same bits (addition and fmax are commutative), and
// the order is fixed: the same inputs give the same result every time.
#ifdef GPUEMU
#define LANES(W) 1
#else
#define LANES(W) (W)
#endif

template <int W, typename T>
__device__ __forceinline__ T group_sum(T v) {
#ifndef GPUEMU
	for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
#endif
	return v;
}

template <int W>
__device__ __forceinline__ double group_max(double v) {
#ifndef GPUEMU
	for (int o = W / 2; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
#endif
	return v;
}

// group_of sets o and lane, this thread's output and its lane in a launch
// of 32 threads per output (engine_cuda.go's launchGroups), and reports
// whether it has work: whole warps past the n outputs have none, and
// under the emulator neither have the lanes but the first.
__device__ __forceinline__ bool group_of(long n, int* o, int* lane) {
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	*o = idx / 32;
	*lane = idx % 32;
	return *lane < LANES(32) && *o < n;
}

// cell_at applies the LSTM cell to row b, unit j: Z (B, 4H) holds the
// pre-activations and receives the activations i, f, g, o; cprev (B, H)
// is c_{t−1}; c, tc and h (B, H) receive c_t, tanh(c_t) and h_t.
__device__ __forceinline__ void cell_at(real* Z, const real* cprev, real* c, real* tc, real* h, int b, int j, int H) {
	long idx = (long)b * H + j;
	real* z = Z + (long)b * 4 * H;
	real i = sigm(z[j]);
	real f = sigm(z[H + j]);
	real g = tanh(z[2 * H + j]);
	real o = sigm(z[3 * H + j]);
	real cn = f * cprev[idx] + i * g;
	real t = tanh(cn);
	z[j] = i;
	z[H + j] = f;
	z[2 * H + j] = g;
	z[3 * H + j] = o;
	c[idx] = cn;
	tc[idx] = t;
	h[idx] = o * t;
}

// lstm_rec_rows: one step of an LSTM layer, its products and its cell:
// Z (B, 4H) holds the step's pre-activations without the step's terms, to
// which it adds hprev·Whhᵀ (hprev (B, H) is h_{t−1}, Whh (4H, H)) and,
// where K2 > 0, x2·W2ᵀ (x2 (B, K2) of row length ldx2, W2 (4H, K2) of row
// length ldw2: a stack reading and its slice of the input weights, or the
// layer below's h_t and the input weights), before the cell of
// lstm_cell. A warp per hidden unit j and R rows of the batch: its lanes
// split the terms of the unit's four gate rows (k ≡ lane mod 32, loaded
// directly, no shared memory or synchronization), combine them with
// shuffles, and lane 0 applies the cell. Launched as a group kernel over
// H·⌈B/R⌉ outputs.
template <int R, typename X>
__device__ __forceinline__ void rec_terms(real (*acc)[4], const X* x, long ldx, const real* W, long ldw, int K, int H, int j, int b0, int rows, int lane) {
	const real* w0 = W + (long)j * ldw;
	const real* w1 = W + (long)(H + j) * ldw;
	const real* w2 = W + (long)(2 * H + j) * ldw;
	const real* w3 = W + (long)(3 * H + j) * ldw;
	for (int k = lane; k < K; k += LANES(32)) {
		real a0 = w0[k], a1 = w1[k], a2 = w2[k], a3 = w3[k];
#pragma unroll
		for (int r = 0; r < R; r++) {
			if (r < rows) {
				real v = x[(long)(b0 + r) * ldx + k];
				acc[r][0] += v * a0;
				acc[r][1] += v * a1;
				acc[r][2] += v * a2;
				acc[r][3] += v * a3;
			}
		}
	}
}

// rec_sums sets acc[r][g] to the terms of a step's products for hidden
// unit j, gate g and batch row b0 + r, rows of them: hprev·Whhᵀ and, where
// K2 > 0, x2·W2ᵀ (as lstm_rec_rows), split over the lanes of a warp and
// combined, so that every lane has the sums.
template <int R, typename X>
__device__ __forceinline__ void rec_sums(real (*acc)[4], const X* hprev, const real* Whh, const real* x2, int ldx2, const real* W2, int ldw2, int K2, int H, int j, int b0, int rows, int lane) {
#pragma unroll
	for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0;
	rec_terms<R>(acc, hprev, H, Whh, H, H, H, j, b0, rows, lane);
	if (K2 > 0) rec_terms<R>(acc, x2, ldx2, W2, ldw2, K2, H, j, b0, rows, lane);
#pragma unroll
	for (int r = 0; r < R; r++)
#pragma unroll
		for (int g = 0; g < 4; g++) acc[r][g] = group_sum<32>(acc[r][g]);
}

template <int R>
__device__ __forceinline__ void lstm_rec_rows(real* Z, const real* hprev, const real* Whh, const real* x2, int ldx2, const real* W2, int ldw2, int K2, const real* cprev, real* c, real* tc, real* h, int B, int H) {
	int o, lane;
	int nb = (B + R - 1) / R;
	if (!group_of((long)H * nb, &o, &lane)) return;
	int j = o % H, b0 = (o / H) * R;
	int rows = min(R, B - b0);
	real acc[R][4];
	rec_sums<R>(acc, hprev, Whh, x2, ldx2, W2, ldw2, K2, H, j, b0, rows, lane);
	if (lane != 0) return;
	// Unrolled over R with the bound tested inside, so that acc stays in
	// registers (an index bounded at run time would put it in local
	// memory).
#pragma unroll
	for (int r = 0; r < R; r++) {
		if (r < rows) {
			real* z = Z + (long)(b0 + r) * 4 * H;
			for (int g = 0; g < 4; g++) z[g * H + j] += acc[r][g];
			cell_at(Z, cprev, c, tc, h, b0 + r, j, H);
		}
	}
}

// cell_back_at runs the LSTM cell backward for row b, unit j, whose whole
// gradient of h_t is dhv: A (B, 4H) are the step's activations, cprev
// c_{t−1}, tc tanh(c_t); dc holds the gradient of c_t and receives that of
// c_{t−1}; dZ (B, 4H) receives the gradient of the pre-activations.
__device__ __forceinline__ void cell_back_at(const real* A, const real* cprev, const real* tc, real dhv, real* dc, real* dZ, int b, int j, int H) {
	long idx = (long)b * H + j;
	const real* a = A + (long)b * 4 * H;
	real* d = dZ + (long)b * 4 * H;
	real i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j], t = tc[idx];
	real dct = dc[idx] + dhv * o * (1 - t * t);
	d[j] = dct * g * i * (1 - i);
	d[H + j] = dct * cprev[idx] * f * (1 - f);
	d[2 * H + j] = dct * i * (1 - g * g);
	d[3 * H + j] = dhv * t * o * (1 - o);
	dc[idx] = dct * f;
}

// back_terms adds to acc[r] the K terms Σ_k dz[b0+r][k]·WT[j][k] (dz rows
// of row length K, WT (H, K): a transposed weight matrix), split over the
// lanes of a warp.
template <int R>
__device__ __forceinline__ void back_terms(real* acc, const real* dz, const real* WT, int K, int j, int b0, int rows, int lane) {
	const real* w = WT + (long)j * K;
	for (int k = lane; k < K; k += LANES(32)) {
		real wk = w[k];
#pragma unroll
		for (int r = 0; r < R; r++)
			if (r < rows) acc[r] += dz[(long)(b0 + r) * K + k] * wk;
	}
}

// lstm_back_rows: one step of an LSTM layer backward, the products that
// complete the gradient of its h_t and its cell in one kernel: dh (B, H)
// holds the gradient of h_t from elsewhere (the output layer, a stack),
// to which it adds dzn·Whh (dzn (B, 4H) the next step's dZ, WhhT = Whhᵀ
// (H, 4H); Kn = 4H, or 0 at the chunk's last step) and dzu·Wu (dzu (B, 4H)
// the layer above's dZ at this step, WuT its input weights transposed;
// Ku = 4H, or 0), before the cell backward of lstm_cell_back. A warp per
// hidden unit j and R rows of the batch, as lstm_rec_rows.
template <int R>
__device__ __forceinline__ void lstm_back_rows(const real* A, const real* cprev, const real* tc, const real* dh, const real* dzn, const real* WhhT, int Kn, const real* dzu, const real* WuT, int Ku, real* dc, real* dZ, int B, int H) {
	int o, lane;
	int nb = (B + R - 1) / R;
	if (!group_of((long)H * nb, &o, &lane)) return;
	int j = o % H, b0 = (o / H) * R;
	int rows = min(R, B - b0);
	real acc[R];
#pragma unroll
	for (int r = 0; r < R; r++) acc[r] = 0;
	if (Kn > 0) back_terms<R>(acc, dzn, WhhT, Kn, j, b0, rows, lane);
	if (Ku > 0) back_terms<R>(acc, dzu, WuT, Ku, j, b0, rows, lane);
#pragma unroll
	for (int r = 0; r < R; r++) acc[r] = group_sum<32>(acc[r]);
	if (lane != 0) return;
#pragma unroll
	for (int r = 0; r < R; r++) {
		if (r < rows) {
			int b = b0 + r;
			cell_back_at(A, cprev, tc, dh[(long)b * H + j] + acc[r], dc, dZ, b, j, H);
		}
	}
}

#ifndef GPUEMU
// grid_barrier waits until every block of the launch has reached it, and
// makes the global writes of each visible to all: bar[0] counts the
// blocks arrived, bar[1] the barriers passed. The launch must have no
// more blocks than the device runs at once (lstm_seq's grid is one block
// per multiprocessor), and bar[0] must be 0 before the launch: each
// barrier leaves it so. A block that waits more than about two seconds
// (4·10⁹ cycles: the others cannot all be running) stops waiting, so that
// the launch ends rather than hang the device, and sets bar[2], which the
// host reads after the pass (its results are wrong) and reports.
__device__ __forceinline__ void grid_barrier(unsigned* bar) {
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0) {
		volatile unsigned* gen = bar + 1;
		unsigned g = *gen;
		__threadfence();
		if (atomicAdd(bar, 1u) == gridDim.x - 1) {
			atomicExch(bar, 0u);
			__threadfence();
			atomicAdd(bar + 1, 1u);
		} else {
			long long t0 = clock64();
			while (*gen == g && clock64() - t0 < 4000000000LL) {
			}
			if (*gen == g) atomicExch(bar + 2, 1u);
		}
		__threadfence();
	}
	__syncthreads();
}
#endif

// lstm_seq_rows: the T steps of an LSTM layer whose only per-step input is
// h_{t−1} (its input's product is in Z beforehand) in one persistent
// launch, where lstm_rec_rows takes a launch per step: Z (T·B, 4H) holds
// the pre-activations without the recurrent terms; hs and cs ((T+1)·B, H)
// hold h_0 and c_0 and receive h_t and c_t at row block t; tc (T·B, H)
// receives tanh(c_t) at block t−1. The warps of the grid share out the
// H·⌈B/R⌉ outputs (a hidden unit, R rows of the batch) of a step as
// lstm_rec_rows does, the same outputs at every step, so that only h_t
// passes between multiprocessors (read past the L1 cache, which is not
// coherent), and wait for each other at a grid barrier between steps. Lane
// r applies the cell to row r. Launched on at most one block per
// multiprocessor (engine_cuda.go); under the emulator, on one block.
template <int R>
__device__ __forceinline__ void lstm_seq_rows(real* Z, real* hs, real* cs, real* tc, const real* Whh, int T, int B, int H, unsigned* bar) {
	int lane = threadIdx.x % 32;
	int per = (blockDim.x + 31) / 32;
	long group = (long)blockIdx.x * per + threadIdx.x / 32, groups = (long)gridDim.x * per;
	int nb = (B + R - 1) / R;
	long n = (long)H * nb, blk = (long)B * H;
	for (int t = 1; t <= T; t++) {
		real* Zt = Z + (t - 1) * 4 * blk;
		const volatile real* hprev = hs + (t - 1) * blk;
		for (long o = group; o < n && lane < LANES(32); o += groups) {
			int j = o % H, b0 = (o / H) * R;
			int rows = min(R, B - b0);
			real acc[R][4];
			rec_sums<R>(acc, hprev, Whh, (const real*)0, 0, (const real*)0, 0, 0, H, j, b0, rows, lane);
#pragma unroll
			for (int r = 0; r < R; r++) {
				if (r < rows && (r == lane || LANES(32) == 1)) {
					real* z = Zt + (long)(b0 + r) * 4 * H;
					for (int g = 0; g < 4; g++) z[g * H + j] += acc[r][g];
					cell_at(Zt, cs + (t - 1) * blk, cs + t * blk, tc + (t - 1) * blk, hs + t * blk, b0 + r, j, H);
				}
			}
		}
#ifndef GPUEMU
		if (t < T) grid_barrier(bar);
#endif
	}
}

extern "C" {

// embed_gather: X[r, :] = W[tok[r], :] for rows r of E columns.
__global__ void embed_gather(real* X, const real* W, const int* tok, int rows, int E) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long)rows * E) return;
	int r = i / E, j = i % E;
	X[i] = W[(long)tok[r] * E + j];
}

// bias_rows: Z[r, j] = b1[j] + b2[j] for rows r of n columns.
__global__ void bias_rows(real* Z, const real* b1, const real* b2, int rows, int n) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long)rows * n) return;
	int j = i % n;
	Z[i] = b1[j] + b2[j];
}

// onehot_add: Z[r, j] += W[j, tok[r]] for rows r of n columns, W of shape
// (n, in): the product of W with one-hot inputs.
__global__ void onehot_add(real* Z, const real* W, const int* tok, int rows, int n, int in) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long)rows * n) return;
	int r = i / n, j = i % n;
	Z[i] += W[(long)j * in + tok[r]];
}

// lstm_cell: one step of B rows. Z (B, 4H) holds the pre-activations and
// receives the activations i, f, g, o; cprev (B, H) is c_{t−1}; c, tc and
// h (B, H) receive c_t, tanh(c_t) and h_t.
__global__ void lstm_cell(real* Z, const real* cprev, real* c, real* tc, real* h, int B, int H) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * H) return;
	cell_at(Z, cprev, c, tc, h, idx / H, idx % H, H);
}

// lstm_rec, lstm_rec2, lstm_rec8: one step of an LSTM layer, its products
// and its cell in one kernel (lstm_rec_rows), with 4, 2 and 8 rows of the
// batch per warp.
__global__ void lstm_rec(real* Z, const real* hprev, const real* Whh, const real* x2, int ldx2, const real* W2, int ldw2, int K2, const real* cprev, real* c, real* tc, real* h, int B, int H) {
	lstm_rec_rows<4>(Z, hprev, Whh, x2, ldx2, W2, ldw2, K2, cprev, c, tc, h, B, H);
}
__global__ void lstm_rec2(real* Z, const real* hprev, const real* Whh, const real* x2, int ldx2, const real* W2, int ldw2, int K2, const real* cprev, real* c, real* tc, real* h, int B, int H) {
	lstm_rec_rows<2>(Z, hprev, Whh, x2, ldx2, W2, ldw2, K2, cprev, c, tc, h, B, H);
}
__global__ void lstm_rec8(real* Z, const real* hprev, const real* Whh, const real* x2, int ldx2, const real* W2, int ldw2, int K2, const real* cprev, real* c, real* tc, real* h, int B, int H) {
	lstm_rec_rows<8>(Z, hprev, Whh, x2, ldx2, W2, ldw2, K2, cprev, c, tc, h, B, H);
}

// lstm_seq, lstm_seq8: lstm_seq_rows with 4 and 8 rows of the batch per
// warp.
__global__ void lstm_seq(real* Z, real* hs, real* cs, real* tc, const real* Whh, int T, int B, int H, unsigned* bar) {
	lstm_seq_rows<4>(Z, hs, cs, tc, Whh, T, B, H, bar);
}
__global__ void lstm_seq8(real* Z, real* hs, real* cs, real* tc, const real* Whh, int T, int B, int H, unsigned* bar) {
	lstm_seq_rows<8>(Z, hs, cs, tc, Whh, T, B, H, bar);
}

// lstm_cell_back: the step's backward pass. A (B, 4H) are its activations,
// cprev c_{t−1}, tc tanh(c_t), dh the whole gradient of h_t; dc holds the
// gradient of c_t and receives that of c_{t−1}; dZ (B, 4H) receives the
// gradient of the pre-activations.
__global__ void lstm_cell_back(const real* A, const real* cprev, const real* tc, const real* dh, real* dc, real* dZ, int B, int H) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * H) return;
	cell_back_at(A, cprev, tc, dh[idx], dc, dZ, idx / H, idx % H, H);
}

// lstm_back, lstm_back2, lstm_back8: one step of an LSTM layer backward,
// its products and its cell in one kernel (lstm_back_rows), with 4, 2 and
// 8 rows of the batch per warp.
__global__ void lstm_back(const real* A, const real* cprev, const real* tc, const real* dh, const real* dzn, const real* WhhT, int Kn, const real* dzu, const real* WuT, int Ku, real* dc, real* dZ, int B, int H) {
	lstm_back_rows<4>(A, cprev, tc, dh, dzn, WhhT, Kn, dzu, WuT, Ku, dc, dZ, B, H);
}
__global__ void lstm_back2(const real* A, const real* cprev, const real* tc, const real* dh, const real* dzn, const real* WhhT, int Kn, const real* dzu, const real* WuT, int Ku, real* dc, real* dZ, int B, int H) {
	lstm_back_rows<2>(A, cprev, tc, dh, dzn, WhhT, Kn, dzu, WuT, Ku, dc, dZ, B, H);
}
__global__ void lstm_back8(const real* A, const real* cprev, const real* tc, const real* dh, const real* dzn, const real* WhhT, int Kn, const real* dzu, const real* WuT, int Ku, real* dc, real* dZ, int B, int H) {
	lstm_back_rows<8>(A, cprev, tc, dh, dzn, WhhT, Kn, dzu, WuT, Ku, dc, dZ, B, H);
}

// transpose: out (cols, rows) = in (rows, cols, row length ldin)ᵀ.
__global__ void transpose(real* out, const real* in, int rows, int cols, int ldin) {
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)rows * cols) return;
	int i = idx / cols, j = idx % cols;
	out[(long)j * rows + i] = in[(long)i * ldin + j];
}

// softmax_rows: one block per row r of S (rows, V), the scores without
// their bias. It takes the biased row's log-normalizer logz[r] and, where
// tgt[r] ≥ 0, its cross-entropy rowloss[r] (0 without a target). mode 0
// leaves the biased scores in S; mode 1 replaces them by the gradient of
// the loss, scale·(softmax − onehot) with scale = 1/div[0] (0 for rows
// without a target); mode 2 by the log-probabilities; mode 3 (the loss
// alone) leaves S as it was. The normalizer is taken in one pass over the
// row (each thread keeps a running maximum and its sum of exponentials,
// rescaled when the maximum grows), so that the loss alone reads the row
// once, and the gradient or log-probabilities twice.
__global__ void softmax_rows(real* S, const real* bias, const int* tgt, double* logz, double* rowloss, int V, int mode, const int* div) {
	__shared__ double sh[BLOCK];
	const double neg = __longlong_as_double(0xfff0000000000000ULL); // −∞
	double scale = 1.0 / (double)div[0];
	int r = blockIdx.x;
	real* row = S + (long)r * V;
	__shared__ double xy; // the target's biased score
	int y = tgt[r];
	double m = neg, s = 0;
	for (int v = threadIdx.x; v < V; v += blockDim.x) {
		real x = row[v] + bias[v];
		if (mode == 0) row[v] = x;
		double d = (double)x;
		if (v == y) xy = d;
		if (d > m) {
			s = s * exp(m - d) + 1.0;
			m = d;
		} else if (d != neg) {
			s += exp(d - m);
		}
	}
	double M = block_max(m, sh);
	s = block_sum(m == neg ? 0.0 : s * exp(m - M), sh);
	double z = M + log(s);
	if (threadIdx.x == 0) {
		logz[r] = z;
		rowloss[r] = y >= 0 ? z - xy : 0.0;
	}
	if (mode == 1) {
		for (int v = threadIdx.x; v < V; v += blockDim.x) {
			double x = (double)(real)(row[v] + bias[v]);
			double p = y >= 0 ? scale * exp(x - z) : 0.0;
			if (v == y) p -= scale;
			row[v] = (real)p;
		}
	} else if (mode == 2) {
		for (int v = threadIdx.x; v < V; v += blockDim.x) row[v] = (real)((double)(real)(row[v] + bias[v]) - z);
	}
}

// sum_scaled: out[0] = scale · Σ x[0 … n), summed by one block in a fixed
// order; with div, scale is 1/div[0].
__global__ void sum_scaled(const double* x, int n, double scale, const int* div, double* out) {
	__shared__ double sh[BLOCK];
	if (div) scale = 1.0 / (double)div[0];
	double s = 0;
	for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
	s = block_sum(s, sh);
	if (threadIdx.x == 0) out[0] = s * scale;
}

// loss_acc: acc[0] = (first ? 0 : acc[0]) + loss[0]·w, multiplied and
// added without contraction into a fused multiply-add, as the host sums a
// stream's chunk losses (Stream.CrossEntropy).
__global__ void loss_acc(const double* loss, double w, int first, double* acc) {
	if (blockIdx.x == 0 && threadIdx.x == 0) acc[0] = __dadd_rn(first ? 0.0 : acc[0], __dmul_rn(loss[0], w));
}

// scatter_rows: G[u, :] = Σ dX[k, :] over the rows k of each distinct
// token u (CSR: uniq[b] is block b's token, rows[ptr[b] … ptr[b+1]) its
// rows in order; blocks from nuniq[0] on do nothing). G's other rows are
// left as they are (zero).
__global__ void scatter_rows(real* G, const real* dX, const int* uniq, const int* ptr, const int* rows, int E, const int* nuniq) {
	int b = blockIdx.x;
	if (b >= nuniq[0]) return;
	long u = uniq[b];
	for (int j = threadIdx.x; j < E; j += blockDim.x) {
		real s = 0;
		for (int k = ptr[b]; k < ptr[b + 1]; k++) s += dX[(long)rows[k] * E + j];
		G[u * E + j] = s;
	}
}

// scatter_cols: G[j, u] = Σ dZ[k, j] over the rows k of each distinct
// token u, G of shape (n, in): the gradient of a weight applied to one-hot
// inputs.
__global__ void scatter_cols(real* G, const real* dZ, const int* uniq, const int* ptr, const int* rows, int n, int in, const int* nuniq) {
	int b = blockIdx.x;
	if (b >= nuniq[0]) return;
	long u = uniq[b];
	for (int j = threadIdx.x; j < n; j += blockDim.x) {
		real s = 0;
		for (int k = ptr[b]; k < ptr[b + 1]; k++) s += dZ[(long)rows[k] * n + j];
		G[(long)j * in + u] = s;
	}
}

// sumsq_partial: partial[blockIdx.x] is the sum of squares of the block's
// grid-strided share of g[0 … n); a fixed grid gives a fixed order.
__global__ void sumsq_partial(const real* g, long n, double* partial) {
	__shared__ double sh[BLOCK];
	double s = 0;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
		double x = g[i];
		s += x * x;
	}
	s = block_sum(s, sh);
	if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// clip_scale is PyTorch's clip_grad_norm_ factor for the global norm
// √sumsq: maxnorm/(norm + 1e-6) when the norm is above maxnorm > 0, else 1.
__device__ double clip_scale(const double* sumsq, double maxnorm) {
	double norm = sqrt(sumsq[0]);
	if (maxnorm > 0 && norm > maxnorm) return maxnorm / (norm + 1e-6);
	return 1.0;
}

// sgd_update: p −= lr·(scale·g), and w = p in REAL where w is given.
__global__ void sgd_update(double* p, const real* g, real* w, long n, double lr, const double* sumsq, double maxnorm) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	double scale = clip_scale(sumsq, maxnorm);
	double gi = (double)g[i];
	if (scale != 1.0) gi *= scale;
	double x = p[i] - lr * gi;
	p[i] = x;
	if (w) w[i] = (real)x;
}

// adam_update: Adam with bias corrections c1 = 1 − β1^k, c2 = 1 − β2^k.
__global__ void adam_update(double* p, const real* g, double* m, double* v, real* w, long n, double lr, double b1, double b2, double eps, double c1, double c2, const double* sumsq, double maxnorm) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	double scale = clip_scale(sumsq, maxnorm);
	double gi = (double)g[i];
	if (scale != 1.0) gi *= scale;
	double mi = b1 * m[i] + (1 - b1) * gi;
	double vi = b2 * v[i] + (1 - b2) * gi * gi;
	m[i] = mi;
	v[i] = vi;
	double x = p[i] - lr * (mi / c1) / (sqrt(vi / c2) + eps);
	p[i] = x;
	if (w) w[i] = (real)x;
}

// to_real: w = (REAL) p, n values.
__global__ void to_real(real* w, const double* p, long n) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) w[i] = (real)p[i];
}

} // extern "C"

// The superposition (JM) stack. A run keeps its stacks s_0 … s_S as
// (S+1, B, K, m) with K cells of size m each, cell 0 the top; the cells
// beyond a stack's height are zero, so every step updates all K cells (the
// zero cells stay zero, and the CPU's variable heights give the same
// values).
extern "C" {

// jm_act: the actions and pushed vector of step t. logits (B, 3) hold
// h_t·W_aᵀ, v (B, m) h_t·W_vᵀ (learned vectors only); a (B, 3) receives
// softmax(logits + b_a) and v becomes σ(v + b_v).
__global__ void jm_act(real* a, const real* logits, const real* ba, real* v, const real* bv, int B, int m, int learned) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx < B) {
		real x0 = logits[3 * idx] + ba[0], x1 = logits[3 * idx + 1] + ba[1], x2 = logits[3 * idx + 2] + ba[2];
		real mx = fmax(x0, fmax(x1, x2));
		real e0 = exp(x0 - mx), e1 = exp(x1 - mx), e2 = exp(x2 - mx);
		real s = e0 + e1 + e2;
		a[3 * idx] = e0 / s;
		a[3 * idx + 1] = e1 / s;
		a[3 * idx + 2] = e2 / s;
	}
	if (learned && idx < B * m) v[idx] = (real)1 / ((real)1 + exp(-(v[idx] + bv[idx % m])));
}

// jm_step: s_t from s_{t−1} (old, new: (B, K, m)), the actions a (B, 3:
// push, no-op, pop) and the pushed vectors v (B rows of m, row stride ldv).
__global__ void jm_step(real* nw, const real* old, const real* a, const real* v, int ldv, int B, int K, int m) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * K * m) return;
	int k = idx % m, c = (idx / m) % K, b = idx / (K * m);
	const real* o = old + (long)b * K * m;
	real p = a[3 * b], n = a[3 * b + 1], q = a[3 * b + 2];
	real up = c == 0 ? v[(long)b * ldv + k] : o[(c - 1) * m + k];
	real x = p * up;
	x += n * o[c * m + k];
	if (c + 1 < K) x += q * o[(c + 1) * m + k];
	nw[idx] = x;
}

// jm_back_cells: step t backward for the cells. dnew (B, K, m) is ∂L/∂s_t
// without the reading's share, dr (B, m) ∂L/∂r_t (null: none); dold
// receives ∂L/∂s_{t−1} and dv (B, m) ∂L/∂v_t.
__global__ void jm_back_cells(real* dold, const real* dnew, const real* dr, const real* a, real* dv, int B, int K, int m) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * K * m) return;
	int k = idx % m, c = (idx / m) % K, b = idx / (K * m);
	const real* d = dnew + (long)b * K * m;
	real p = a[3 * b], n = a[3 * b + 1], q = a[3 * b + 2];
	real top = d[k] + (dr ? dr[(long)b * m + k] : (real)0);
	real dc = c == 0 ? top : d[c * m + k];
	real x = 0;
	if (c >= 1) x += q * (c - 1 == 0 ? top : d[(c - 1) * m + k]);
	x += n * dc;
	if (c + 1 < K) x += p * d[(c + 1) * m + k];
	dold[idx] = x;
	if (c == 0) dv[(long)b * m + k] = p * top;
}

// jm_back_actions: one block per stack b: ∂L/∂a_t from the step's cells,
// then the softmax's backward pass into dlogits (B, 3); dv (B, m) becomes
// ∂L/∂(v's pre-activation) for learned vectors (learned), else is left.
__global__ void jm_back_actions(real* dlogits, const real* dnew, const real* dr, const real* old, const real* a, const real* v, int ldv, real* dv, int K, int m, int learned) {
	__shared__ double sh[BLOCK];
	int b = blockIdx.x;
	const real* d = dnew + (long)b * K * m;
	const real* o = old + (long)b * K * m;
	double sp = 0, sn = 0, sq = 0;
	for (int i = threadIdx.x; i < K * m; i += blockDim.x) {
		int c = i / m, k = i % m;
		double dc = d[i] + (c == 0 && dr ? dr[(long)b * m + k] : (real)0);
		double up = c == 0 ? (double)v[(long)b * ldv + k] : (double)o[(c - 1) * m + k];
		sp += dc * up;
		sn += dc * (double)o[i];
		if (c + 1 < K) sq += dc * (double)o[i + m];
	}
	sp = block_sum(sp, sh);
	sn = block_sum(sn, sh);
	sq = block_sum(sq, sh);
	if (threadIdx.x == 0) {
		double p = a[3 * b], n = a[3 * b + 1], q = a[3 * b + 2];
		double dot = p * sp + n * sn + q * sq;
		dlogits[3 * b] = (real)(p * (sp - dot));
		dlogits[3 * b + 1] = (real)(n * (sn - dot));
		dlogits[3 * b + 2] = (real)(q * (sq - dot));
	}
	if (learned) {
		for (int k = threadIdx.x; k < m; k += blockDim.x) {
			real x = v[(long)b * ldv + k];
			dv[(long)b * m + k] *= x * ((real)1 - x);
		}
	}
}

// add_rows: y[r, j] += x[r, j] for rows of n values with row strides ldy
// and ldx.
__global__ void add_rows(real* y, int ldy, const real* x, int ldx, int rows, int n) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long)rows * n) return;
	int r = i / n, j = i % n;
	y[(long)r * ldy + j] += x[(long)r * ldx + j];
}

} // extern "C"

// The stratification (Gref) stack, one thread per stack for the
// sequential scans over its depth, in the CPU's order of operations. A
// run keeps the strengths of step t at S + B·t(t−1)/2 (B rows of t), the
// pushed vectors v (T, B, m), the signals u and d (T, B), each step's
// reading weights W (B, T) and the vectors' adjoints adjV (T, B, m).
extern "C" {

// gref_act: u = σ(u + b_u), d = σ(d + b_d) (B values each), v = tanh(v +
// b_v) (B, m).
__global__ void gref_act(real* u, const real* bu, real* d, const real* bd, real* v, const real* bv, int B, int m) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx < B) {
		u[idx] = (real)1 / ((real)1 + exp(-(u[idx] + bu[0])));
		d[idx] = (real)1 / ((real)1 + exp(-(d[idx] + bd[0])));
	}
	if (idx < B * m) v[idx] = tanh(v[idx] + bv[idx % m]);
}

// gref_step: the strengths of step t and its reading weights W.
__global__ void gref_step(real* S, const real* u, const real* d, real* W, int t, int B, int T) {
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= B) return;
	real* sn = S + (long)B * t * (t - 1) / 2 + (long)b * t;
	if (t > 1) {
		const real* sp = S + (long)B * (t - 1) * (t - 2) / 2 + (long)b * (t - 1);
		real above = 0;
		for (int i = t - 1; i >= 1; i--) {
			real a = fmax((real)0, u[b] - above);
			sn[i - 1] = fmax((real)0, sp[i - 1] - a);
			above += sp[i - 1];
		}
	}
	sn[t - 1] = d[b];
	real c = 0;
	for (int i = t; i >= 1; i--) {
		W[(long)b * T + i - 1] = fmin(sn[i - 1], fmax((real)0, (real)1 - c));
		c += sn[i - 1];
	}
}

// gref_read: r (B, m) = Σ_{i=t…1} W[b, i]·v_i.
__global__ void gref_read(real* r, const real* W, const real* v, int t, int B, int T, int m) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * m) return;
	int b = idx / m, k = idx % m;
	real x = 0;
	for (int i = t; i >= 1; i--) {
		real w = W[(long)b * T + i - 1];
		if (w != 0) x += w * v[((long)(i - 1) * B + b) * m + k];
	}
	r[idx] = x;
}

// gref_back: step t backward, one thread per stack, as the CPU's tape:
// dr (B, m) is ∂L/∂r_t (null: none); dsNew (B, T) ∂L/∂s_t (zero for the
// last step), dsOld receives ∂L/∂s_{t−1}; adjV accumulates the vectors'
// adjoints; du, dd (B) and dv (B, m) receive the gradients of the step's
// signals' and vector's pre-activations. scratch holds 2T values per
// stack.
__global__ void gref_back(const real* dr, real* dsNew, real* dsOld, const real* S, const real* u, const real* d, const real* v, real* adjV, real* du, real* dd, real* dv, real* scratch, int t, int B, int T, int m) {
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= B) return;
	const real* sn = S + (long)B * t * (t - 1) / 2 + (long)b * t;
	real* ds = scratch + (long)b * 2 * T;
	real* dc = ds + T;
	for (int i = 0; i < t; i++) ds[i] = dsNew[(long)b * T + i];
	real* dvb = dv + (long)b * m;
	for (int k = 0; k < m; k++) dvb[k] = adjV[((long)(t - 1) * B + b) * m + k];
	real c = 0;
	for (int i = t; i >= 1; i--) {
		real lim = fmax((real)0, (real)1 - c);
		real w = fmin(sn[i - 1], lim);
		real* dvi = i == t ? dvb : adjV + ((long)(i - 1) * B + b) * m;
		const real* vi = v + ((long)(i - 1) * B + b) * m;
		real dw = 0;
		if (dr) {
			for (int k = 0; k < m; k++) {
				real g = dr[(long)b * m + k];
				dw += g * vi[k];
				dvi[k] += w * g;
			}
		}
		dc[i - 1] = 0;
		if (sn[i - 1] <= lim) ds[i - 1] += dw;
		else if ((real)1 - c > 0) dc[i - 1] = -dw;
		c += sn[i - 1];
	}
	real acc = 0;
	for (int j = 1; j <= t; j++) {
		ds[j - 1] += acc;
		acc += dc[j - 1];
	}
	real ddb = ds[t - 1];
	real dub = 0;
	if (t > 1) {
		const real* sp = S + (long)B * (t - 1) * (t - 2) / 2 + (long)b * (t - 1);
		real* dsp = dsOld + (long)b * T;
		for (int i = 0; i < t - 1; i++) dsp[i] = 0;
		real* dab = dc;
		real ub = u[b];
		real above = 0;
		for (int i = t - 1; i >= 1; i--) {
			real a = fmax((real)0, ub - above);
			dab[i - 1] = 0;
			if (sp[i - 1] - a > 0) {
				dsp[i - 1] += ds[i - 1];
				if (ub - above > 0) {
					dub -= ds[i - 1];
					dab[i - 1] = ds[i - 1];
				}
			}
			above += sp[i - 1];
		}
		acc = 0;
		for (int j = 1; j <= t - 1; j++) {
			dsp[j - 1] += acc;
			acc += dab[j - 1];
		}
	}
	real ub = u[b], db = d[b];
	du[b] = dub * (ub * ((real)1 - ub));
	dd[b] = ddb * (db * ((real)1 - db));
	for (int k = 0; k < m; k++) {
		real x = v[((long)(t - 1) * B + b) * m + k];
		dvb[k] *= (real)1 - x * x;
	}
}

} // extern "C"

// The nondeterministic stacks (NS, NS+S, NS+U, RNS) in sentence mode: Lang's
// dynamic program in log space, in float64 whatever the precision (as on
// the CPU), one thread per entry, log-sum-exp in two passes (the maximum,
// then the sum). Positions: with the original bottom position 0 is time 0
// (α one-hot at (0, 0)) and step t makes position t; with the fixed
// bottom position 0 is the extra row i = −1 and position 1 time 0 (γ[0→1]
// one-hot at (0,0)→(0,0)), and step t makes position t+1. Per sequence b:
// lg[b][p][d−1][qx][ry] = log γ[p−d→p] for distances d = 1 … Dw, la[b][p][ry]
// = log α[p], gp[b][p][d−1][uy][r] = log γ′[p−d→p] (d ≥ 2); row and column
// indices q·|Γ|+x; the actions of a (q, x) row are L = 2m+|Q| log-weights:
// push (r, y), replace (r, y), pop r.
extern "C" {

#define NEG (__longlong_as_double(0xfff0000000000000ULL))

// lse_add adds exp(x) to the log-sum-exp held as a running maximum *mx
// (NEG before any finite term) and the sum *s of the terms' exponentials
// relative to it, in one pass over the terms: the sum is rescaled when
// the maximum grows, so that each term is read once (against a pass for
// the maximum and one for the sum) for an exponential each all the same.
// lse_end returns the logarithm of the sum: NEG where every term was
// (−∞ + log 0), NaN where a term was NaN.
__device__ __forceinline__ void lse_add(double x, double* mx, double* s) {
	if (x > *mx) {
		*s = *s * exp(*mx - x) + 1.0;
		*mx = x;
	} else if (x != NEG) {
		*s += exp(x - *mx);
	}
}

__device__ __forceinline__ double lse_end(double mx, double s) { return mx + log(s); }

// ns_init: α at the initial positions, and γ[0→1] with the fixed bottom.
__global__ void ns_init(double* lg, double* la, int B, int NP, int Dw, int m, int fixed) {
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= B) return;
	for (int p = 0; p <= fixed; p++)
		for (int j = 0; j < m; j++) la[((long)b * NP + p) * m + j] = j == 0 ? 0.0 : NEG;
	if (fixed) {
		double* g = lg + (((long)b * NP + 1) * Dw) * m * m;
		for (int j = 0; j < m * m; j++) g[j] = j == 0 ? 0.0 : NEG;
	}
}

// ns_act: the step's action log-weights (B, m·L) from the scores
// logits (B, m·L, without their bias): with normalized, a log-softmax over
// each (q, x) row.
__global__ void ns_act(double* logw, const real* logits, const real* bias, int B, int m, int L, int normalized) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * m) return;
	int b = idx / m, row = idx % m;
	const real* x = logits + (long)b * m * L + row * L;
	const real* bb = bias + row * L;
	double* w = logw + (long)b * m * L + row * L;
	for (int j = 0; j < L; j++) w[j] = (double)x[j] + (double)bb[j];
	if (!normalized) return;
	double mx = NEG;
	for (int j = 0; j < L; j++) mx = fmax(mx, w[j]);
	if (mx == NEG) return;
	double z = 0;
	for (int j = 0; j < L; j++) z += exp(w[j] - mx);
	double lz = mx + log(z);
	for (int j = 0; j < L; j++) w[j] -= lz;
}

// ns_gp: γ′[k→p][(u,y)→r] = ⊕_{s,z} γ[k→p−1][(u,y)→(s,z)] + Δpop[(s,z)→r]
// for the rows k = p − d, d = 2 … Dw.
__global__ void ns_gp(double* gp, const double* lg, const double* logw, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G, L = 2 * m + Q;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * Dw * m * Q) return;
	int r = idx % Q, uy = (idx / Q) % m, dd = (idx / (Q * m)) % Dw;
	int b = idx / ((long)Q * m * Dw);
	int d = dd + 1;
	if (d < 2 || p - d < 0) return;
	const double* g = lg + (((long)b * NP + (p - 1)) * Dw + (d - 2)) * m * m + uy * m;
	const double* w = logw + (long)b * m * L + 2 * m + r;
	double mx = NEG, s = 0;
	for (int sz = 0; sz < m; sz++) lse_add(g[sz] + w[sz * L], &mx, &s);
	gp[(((long)b * NP + p) * Dw + dd) * m * Q + uy * Q + r] = lse_end(mx, s);
}

// ns_col: column p of γ: γ[p−1→p] = Δpush, and for d ≥ 2 the replace and
// pop terms (their log-sum-exp in one pass, lse_add); one thread per
// entry (b, d, qx, ry), so that neighbouring
// threads read neighbouring entries (a group per entry, as the kernels
// below, was slower on an H200: its lanes read far-apart distances).
__global__ void ns_col(double* lg, const double* gp, const double* logw, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G, L = 2 * m + Q;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * Dw * m * m) return;
	int ry = idx % m, qx = (idx / m) % m, dd = (idx / ((long)m * m)) % Dw;
	int b = idx / ((long)m * m * Dw);
	int d = dd + 1, i = p - d;
	if (i < 0) return;
	const double* w = logw + (long)b * m * L;
	double* out = lg + (((long)b * NP + p) * Dw + dd) * m * m + qx * m + ry;
	if (d == 1) {
		*out = w[qx * L + ry];
		return;
	}
	int r = ry / G, y = ry % G;
	const double* rep = lg + (((long)b * NP + (p - 1)) * Dw + (d - 2)) * m * m + qx * m;
	double mx = NEG, s = 0;
	for (int sz = 0; sz < m; sz++) lse_add(rep[sz] + w[sz * L + m + ry], &mx, &s);
	for (int dk = 1; dk <= d - 2; dk++) {
		int k = i + dk;
		const double* gk = lg + (((long)b * NP + k) * Dw + (dk - 1)) * m * m + qx * m;
		const double* gq = gp + (((long)b * NP + p) * Dw + (d - dk - 1)) * m * Q;
		for (int u = 0; u < Q; u++) {
			int uy = u * G + y;
			lse_add(gk[uy] + gq[uy * Q + r], &mx, &s);
		}
	}
	*out = lse_end(mx, s);
}

// ns_alpha: α[p][ry] = ⊕_{d, qx} α[p−d][qx] + γ[p−d→p][qx→ry]; a group of
// 32 threads per (b, ry), over the terms (d, qx).
__global__ void ns_alpha(double* la, const double* lg, int p, int B, int NP, int Dw, int m) {
	int o, lane;
	if (!group_of((long)B * m, &o, &lane)) return;
	int b = o / m, ry = o % m;
	int n = min(Dw, p) * m;
	const double* g = lg + ((long)b * NP + p) * Dw * m * m + ry;
	const double* a = la + (long)b * NP * m;
	double mx = NEG, s = 0;
	for (int j = lane; j < n; j += LANES(32)) {
		int d = j / m + 1, qx = j % m;
		lse_add(a[(p - d) * m + qx] + g[((long)(d - 1) * m + qx) * m], &mx, &s);
	}
	// The lanes' sums, each relative to its own maximum, combined
	// relative to the group's.
	// (A lane without terms adds 0·exp(−∞) = 0; one whose only terms
	// were NaN adds its NaN.)
	double M = group_max<32>(mx);
	if (M != NEG) {
		M += log(group_sum<32>(s * exp(mx - M)));
	}
	if (lane == 0) la[((long)b * NP + p) * m + ry] = M;
}

// ns_read: the reading of α[p] (B rows of R): the normalized α over (r, y)
// with stateReading, else summed over r.
__global__ void ns_read(real* rd, const double* la, int p, int B, int NP, int Q, int G, int stateReading) {
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= B) return;
	int m = Q * G, R = stateReading ? m : G;
	const double* a = la + ((long)b * NP + p) * m;
	double mx = NEG;
	for (int j = 0; j < m; j++) mx = fmax(mx, a[j]);
	double s = 0;
	for (int j = 0; j < m; j++) s += exp(a[j] - mx);
	double z = mx + log(s);
	real* out = rd + (long)b * R;
	if (stateReading) {
		for (int j = 0; j < m; j++) out[j] = (real)exp(a[j] - z);
		return;
	}
	for (int y = 0; y < G; y++) {
		double x = 0;
		for (int r = 0; r < Q; r++) x += exp(a[r * G + y] - z);
		out[y] = (real)x;
	}
}

// ns_back_read: ∂L/∂α[p] from the reading's gradient dr (B rows of R).
__global__ void ns_back_read(double* dla, const double* la, const real* dr, int p, int B, int NP, int Q, int G, int stateReading) {
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= B || !dr) return;
	int m = Q * G, R = stateReading ? m : G;
	const double* a = la + ((long)b * NP + p) * m;
	const real* g = dr + (long)b * R;
	double mx = NEG;
	for (int j = 0; j < m; j++) mx = fmax(mx, a[j]);
	double s = 0;
	for (int j = 0; j < m; j++) s += exp(a[j] - mx);
	double z = mx + log(s);
	double dot = 0;
	for (int j = 0; j < m; j++) dot += exp(a[j] - z) * (double)g[stateReading ? j : j % G];
	double* da = dla + ((long)b * NP + p) * m;
	for (int j = 0; j < m; j++) {
		double P = exp(a[j] - z);
		if (P != 0) da[j] += P * ((double)g[stateReading ? j : j % G] - dot);
	}
}

// ns_back_alpha_g: ∂L/∂γ[p−d→p] from ∂L/∂α[p].
__global__ void ns_back_alpha_g(double* dlg, const double* lg, const double* la, const double* dla, int p, int B, int NP, int Dw, int m) {
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * Dw * m * m) return;
	int ry = idx % m, qx = (idx / m) % m, dd = (idx / ((long)m * m)) % Dw;
	int b = idx / ((long)m * m * Dw);
	int i = p - dd - 1;
	if (i < 0) return;
	double ap = la[((long)b * NP + p) * m + ry], g = dla[((long)b * NP + p) * m + ry];
	if (ap == NEG || g == 0) return;
	long o = (((long)b * NP + p) * Dw + dd) * m * m + qx * m + ry;
	double x = la[((long)b * NP + i) * m + qx] + lg[o];
	if (x != NEG) dlg[o] += g * exp(x - ap);
}

// ns_back_alpha_a: ∂L/∂α[p−d] from ∂L/∂α[p].
__global__ void ns_back_alpha_a(double* dla, const double* lg, const double* la, int p, int B, int NP, int Dw, int m) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * Dw * m) return;
	int qx = idx % m, dd = (idx / m) % Dw, b = idx / (m * Dw);
	int i = p - dd - 1;
	if (i < 0) return;
	double ai = la[((long)b * NP + i) * m + qx];
	if (ai == NEG) return;
	const double* ap = la + ((long)b * NP + p) * m;
	const double* gp = dla + ((long)b * NP + p) * m;
	const double* g = lg + (((long)b * NP + p) * Dw + dd) * m * m + qx * m;
	double s = 0;
	for (int ry = 0; ry < m; ry++)
		if (ap[ry] != NEG && gp[ry] != 0 && g[ry] != NEG) s += gp[ry] * exp(ai + g[ry] - ap[ry]);
	dla[((long)b * NP + i) * m + qx] += s;
}

// ns_back_push: ∂L/∂Δpush of the step, from ∂L/∂γ[p−1→p].
__global__ void ns_back_push(double* dlogw, const double* dlg, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G, L = 2 * m + Q;
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * m * m) return;
	int ry = idx % m, qx = (idx / m) % m, b = idx / (m * m);
	dlogw[(long)b * m * L + qx * L + ry] = dlg[(((long)b * NP + p) * Dw) * m * m + qx * m + ry];
}

// The weight of a replace term of γ[i→p][qx→ry] in its adjoint: the
// term's share of the entry times the entry's adjoint.
__device__ __forceinline__ double share(double x, double e, double g) {
	return (e == NEG || g == 0 || x == NEG) ? 0.0 : g * exp(x - e);
}

// ns_back_rep: ∂L/∂γ[i→p−1] through the replace terms of γ[i→p].
__global__ void ns_back_rep(double* dlg, const double* lg, const double* logw, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G, L = 2 * m + Q;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * Dw * m * m) return;
	int sz = idx % m, qx = (idx / m) % m, dd = (idx / ((long)m * m)) % Dw;
	int b = idx / ((long)m * m * Dw);
	int d = dd + 1;
	if (d < 2 || p - d < 0) return;
	long src = (((long)b * NP + (p - 1)) * Dw + (d - 2)) * m * m + qx * m + sz;
	double x0 = lg[src];
	const double* e = lg + (((long)b * NP + p) * Dw + dd) * m * m + qx * m;
	const double* g = dlg + (((long)b * NP + p) * Dw + dd) * m * m + qx * m;
	const double* w = logw + (long)b * m * L + sz * L + m;
	double s = 0;
	for (int ry = 0; ry < m; ry++) s += share(x0 + w[ry], e[ry], g[ry]);
	dlg[src] += s;
}

// ns_back_rep_w: ∂L/∂Δrep of the step; a group of 32 threads per
// (b, sz, ry), over the terms (d, qx).
__global__ void ns_back_rep_w(double* dlogw, const double* dlg, const double* lg, const double* logw, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G, L = 2 * m + Q;
	int o, lane;
	if (!group_of((long)B * m * m, &o, &lane)) return;
	int ry = o % m, sz = (o / m) % m, b = o / (m * m);
	double wr = logw[(long)b * m * L + sz * L + m + ry];
	int n = (min(Dw, p) - 1) * m;
	double s = 0;
	for (int j = lane; j < n; j += LANES(32)) {
		int d = j / m + 2, qx = j % m;
		long src = (((long)b * NP + (p - 1)) * Dw + (d - 2)) * m * m + qx * m + sz;
		long e = (((long)b * NP + p) * Dw + (d - 1)) * m * m + qx * m + ry;
		s += share(lg[src] + wr, lg[e], dlg[e]);
	}
	s = group_sum<32>(s);
	if (lane == 0) dlogw[(long)b * m * L + sz * L + m + ry] = s;
}

// ns_back_pop: ∂L/∂γ[i→k] through the pop terms of γ[i→p], for every
// split k = i + dk of every row i = p − d.
__global__ void ns_back_pop(double* dlg, const double* lg, const double* gp, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * Dw * Dw * m * m) return;
	int uy = idx % m, qx = (idx / m) % m;
	long rest = idx / ((long)m * m);
	int dk = rest % Dw + 1, d = (rest / Dw) % Dw + 1;
	int b = rest / ((long)Dw * Dw);
	int i = p - d, k = i + dk;
	if (i < 0 || dk > d - 2) return;
	int y = uy % G;
	long tgt = (((long)b * NP + k) * Dw + (dk - 1)) * m * m + qx * m + uy;
	double x0 = lg[tgt];
	if (x0 == NEG) return;
	const double* gq = gp + (((long)b * NP + p) * Dw + (d - dk - 1)) * m * Q + uy * Q;
	const double* e = lg + (((long)b * NP + p) * Dw + (d - 1)) * m * m + qx * m;
	const double* g = dlg + (((long)b * NP + p) * Dw + (d - 1)) * m * m + qx * m;
	double s = 0;
	for (int r = 0; r < Q; r++) s += share(x0 + gq[r], e[r * G + y], g[r * G + y]);
	dlg[tgt] += s;
}

// ns_back_gp: ∂L/∂γ′[k→p] (dgp, the column's: [d−1][uy][r]) through the
// pop terms of the rows i < k; a group of 32 threads per (b, d′, uy, r),
// over the terms (d, qx).
__global__ void ns_back_gp(double* dgp, const double* dlg, const double* lg, const double* gp, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G;
	int o, lane;
	if (!group_of((long)B * Dw * m * Q, &o, &lane)) return;
	int r = o % Q, uy = (o / Q) % m, dd = (o / (Q * m)) % Dw, b = o / (Q * m * Dw);
	int dp = dd + 1, k = p - dp;
	double* out = dgp + ((long)b * Dw + dd) * m * Q + uy * Q + r;
	if (dp < 2 || k < 0) {
		if (lane == 0) *out = 0;
		return;
	}
	int y = uy % G, ry = r * G + y;
	double x1 = gp[(((long)b * NP + p) * Dw + dd) * m * Q + uy * Q + r];
	double s = 0;
	if (x1 != NEG) {
		int n = (min(Dw, p) - dp) * m;
		for (int j = lane; j < n; j += LANES(32)) {
			int dk = j / m + 1, qx = j % m, d = dp + dk;
			double gk = lg[(((long)b * NP + k) * Dw + (dk - 1)) * m * m + qx * m + uy];
			long e = (((long)b * NP + p) * Dw + (d - 1)) * m * m + qx * m + ry;
			s += share(gk + x1, lg[e], dlg[e]);
		}
		s = group_sum<32>(s);
	}
	if (lane == 0) *out = s;
}

// ns_back_gp_g: ∂L/∂γ[k→p−1] through γ′[k→p].
__global__ void ns_back_gp_g(double* dlg, const double* lg, const double* gp, const double* dgp, const double* logw, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G, L = 2 * m + Q;
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * Dw * m * m) return;
	int sz = idx % m, uy = (idx / m) % m, dd = (idx / ((long)m * m)) % Dw;
	int b = idx / ((long)m * m * Dw);
	int dp = dd + 1;
	if (dp < 2 || p - dp < 0) return;
	long src = (((long)b * NP + (p - 1)) * Dw + (dp - 2)) * m * m + uy * m + sz;
	double x0 = lg[src];
	const double* e = gp + (((long)b * NP + p) * Dw + dd) * m * Q + uy * Q;
	const double* g = dgp + ((long)b * Dw + dd) * m * Q + uy * Q;
	const double* w = logw + (long)b * m * L + sz * L + 2 * m;
	double s = 0;
	for (int r = 0; r < Q; r++) s += share(x0 + w[r], e[r], g[r]);
	dlg[src] += s;
}

// ns_back_pop_w: ∂L/∂Δpop of the step; a group of 32 threads per
// (b, sz, r), over the terms (d′, uy).
__global__ void ns_back_pop_w(double* dlogw, const double* lg, const double* gp, const double* dgp, const double* logw, int p, int B, int NP, int Dw, int Q, int G) {
	int m = Q * G, L = 2 * m + Q;
	int o, lane;
	if (!group_of((long)B * m * Q, &o, &lane)) return;
	int r = o % Q, sz = (o / Q) % m, b = o / (Q * m);
	double wp = logw[(long)b * m * L + sz * L + 2 * m + r];
	int n = (min(Dw, p) - 1) * m;
	double s = 0;
	for (int j = lane; j < n; j += LANES(32)) {
		int dp = j / m + 2, uy = j % m;
		double src = lg[(((long)b * NP + (p - 1)) * Dw + (dp - 2)) * m * m + uy * m + sz];
		long e = (((long)b * NP + p) * Dw + (dp - 1)) * m * Q + uy * Q + r;
		long g = ((long)b * Dw + (dp - 1)) * m * Q + uy * Q + r;
		s += share(src + wp, gp[e], dgp[g]);
	}
	s = group_sum<32>(s);
	if (lane == 0) dlogw[(long)b * m * L + sz * L + 2 * m + r] = s;
}

// ns_act_back: the gradient of the step's scores (B, m·L) from that of its
// log-weights: through the rows' log-softmax when normalized.
__global__ void ns_act_back(real* dlogits, const double* dlogw, const double* logw, int B, int m, int L, int normalized) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * m) return;
	int b = idx / m, row = idx % m;
	const double* g = dlogw + (long)b * m * L + row * L;
	const double* w = logw + (long)b * m * L + row * L;
	real* out = dlogits + (long)b * m * L + row * L;
	double sum = 0;
	if (normalized)
		for (int j = 0; j < L; j++) sum += g[j];
	for (int j = 0; j < L; j++) out[j] = (real)(normalized ? g[j] - exp(w[j]) * sum : g[j]);
}

} // extern "C"

extern "C" {

// The products that cuBLAS runs far below the card's rate: few terms
// (gemm_k) or few columns (gemm_n), such as a stack reading's 2 to 12
// columns against the LSTM's input weights or an action layer of 3 to 12
// outputs. Both compute row-major C (M×N) = beta·C + A (M×K) · B′, B′
// being B (K×N, row length ldb) or, with transB, the transpose of B (N×K,
// row length ldb), each entry's K terms summed in float64 in a fixed order
// (C is not read where beta is 0).

// gemm_k: one thread per entry, its terms one after another.
__global__ void gemm_k(real* C, int ldc, const real* A, int lda, const real* Bm, int ldb, int transB, int M, int N, int K, double beta) {
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)M * N) return;
	int i = idx / N, j = idx % N;
	const real* a = A + (long)i * lda;
	double s = 0;
	if (transB) {
		const real* b = Bm + (long)j * ldb;
		for (int k = 0; k < K; k++) s += (double)a[k] * (double)b[k];
	} else {
		for (int k = 0; k < K; k++) s += (double)a[k] * (double)Bm[(long)k * ldb + j];
	}
	real* c = C + (long)i * ldc + j;
	*c = beta == 0 ? (real)s : (real)(beta * (double)*c + s);
}

// gemm_n: a group of 32 threads per entry, splitting its terms.
__global__ void gemm_n(real* C, int ldc, const real* A, int lda, const real* Bm, int ldb, int transB, int M, int N, int K, double beta) {
	int o, lane;
	if (!group_of((long)M * N, &o, &lane)) return;
	int i = o / N, j = o % N;
	const real* a = A + (long)i * lda;
	double s = 0;
	if (transB) {
		const real* b = Bm + (long)j * ldb;
		for (int k = lane; k < K; k += LANES(32)) s += (double)a[k] * (double)b[k];
	} else {
		for (int k = lane; k < K; k += LANES(32)) s += (double)a[k] * (double)Bm[(long)k * ldb + j];
	}
	s = group_sum<32>(s);
	if (lane != 0) return;
	real* c = C + (long)i * ldc + j;
	*c = beta == 0 ? (real)s : (real)(beta * (double)*c + s);
}

// rows_copy: dst[b·ldd + k] = src[b·lds + k] for k < n and b < B: the
// carried part of every sequence's stack in or out of a staging buffer.
__global__ void rows_copy(double* dst, long ldd, const double* src, long lds, long n, int B) {
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * n) return;
	long b = idx / n, k = idx % n;
	dst[b * ldd + k] = src[b * lds + k];
}

} // extern "C"

extern "C" {

// fill: x[0 … n) = v.
__global__ void fill(double* x, double v, long n) {
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = v;
}

} // extern "C"

// The vector stack (VRNS): the RNS program, its stack elements carrying
// vectors of size mv; the reading is the expected vector on top per
// (state, top symbol), r_t[(ry)·mv + j] = Σ_i V[i][j]·exp(P_i[ry] − log Σα[p])
// with P_i[ry] = ⊕_qx α[i][qx] + γ[i→p][qx→ry], the terms of α[p], and V[i]
// the vector of the element that row i's runs have on top (pushed by the
// step that made position i+1; with the fixed bottom, V[0] is the bottom
// vector). V (B, NP, mv), P (B, Dw, m) per step.
extern "C" {

// vr_vec: step t's pushed vectors σ(pre + b_v) into V at position p−1.
__global__ void vr_vec(double* V, const real* pre, const real* bv, int p, int B, int NP, int mv) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * mv) return;
	int b = idx / mv, j = idx % mv;
	double x = (double)pre[idx] + (double)bv[j];
	V[((long)b * NP + (p - 1)) * mv + j] = 1.0 / (1.0 + exp(-x));
}

// vr_bottom: V[b][0] = the bottom vector (fixed bottom), and r_0 = the
// bottom vector at (0, 0) for every sequence (rd: B rows of m·mv).
// kind 0: σ(w0), 1: zeros, 2: ones.
__global__ void vr_bottom(double* V, real* rd, const real* w0, int kind, int fixed, int B, int NP, int m, int mv) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * m * mv) return;
	int b = idx / (m * mv), k = idx % (m * mv);
	double v = 0;
	if (k < mv) v = kind == 0 ? 1.0 / (1.0 + exp(-(double)w0[k])) : kind == 2 ? 1.0 : 0.0;
	rd[idx] = (real)v;
	if (fixed && k < mv) V[((long)b * NP) * mv + k] = v;
}

// vr_P: P_i[ry] for the rows i = p − d of column p.
__global__ void vr_P(double* P, const double* lg, const double* la, int p, int B, int NP, int Dw, int m) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * Dw * m) return;
	int ry = idx % m, dd = (idx / m) % Dw, b = idx / (m * Dw);
	int i = p - dd - 1;
	double* out = P + ((long)b * Dw + dd) * m + ry;
	if (i < 0) {
		*out = NEG;
		return;
	}
	const double* a = la + ((long)b * NP + i) * m;
	const double* g = lg + (((long)b * NP + p) * Dw + dd) * m * m + ry;
	double mx = NEG;
	for (int qx = 0; qx < m; qx++) mx = fmax(mx, a[qx] + g[qx * m]);
	if (mx == NEG) {
		*out = NEG;
		return;
	}
	double s = 0;
	for (int qx = 0; qx < m; qx++) s += exp(a[qx] + g[qx * m] - mx);
	*out = mx + log(s);
}

// logZ is log Σ α[p] of sequence b.
__device__ double logZ(const double* la, int b, int p, int NP, int m) {
	const double* a = la + ((long)b * NP + p) * m;
	double mx = NEG;
	for (int j = 0; j < m; j++) mx = fmax(mx, a[j]);
	double s = 0;
	for (int j = 0; j < m; j++) s += exp(a[j] - mx);
	return mx + log(s);
}

// vr_read: the reading of column p (B rows of m·mv).
__global__ void vr_read(real* rd, const double* P, const double* V, const double* la, int p, int B, int NP, int Dw, int m, int mv) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * m * mv) return;
	int j = idx % mv, ry = (idx / mv) % m, b = idx / (m * mv);
	double z = logZ(la, b, p, NP, m);
	double x = 0;
	for (int d = 1; d <= Dw && p - d >= 0; d++) {
		double pi = P[((long)b * Dw + (d - 1)) * m + ry];
		if (pi != NEG) x += V[((long)b * NP + (p - d)) * mv + j] * exp(pi - z);
	}
	rd[idx] = (real)x;
}

// vr_back_read: from the reading's gradient dr, dP[d][ry] = ∂L/∂P_i[ry]
// (without the share through log Σα) for the rows of column p, and dV of
// their vectors.
__global__ void vr_back_P(double* dP, const double* P, const double* V, const double* la, const real* dr, int p, int B, int NP, int Dw, int m, int mv) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * Dw * m) return;
	int ry = idx % m, dd = (idx / m) % Dw, b = idx / (m * Dw);
	int i = p - dd - 1;
	double* out = dP + ((long)b * Dw + dd) * m + ry;
	double pi = P[((long)b * Dw + dd) * m + ry];
	if (i < 0 || pi == NEG || !dr) {
		*out = 0;
		return;
	}
	double w = exp(pi - logZ(la, b, p, NP, m));
	const double* v = V + ((long)b * NP + i) * mv;
	const real* g = dr + ((long)b * m + ry) * mv;
	double c = 0;
	for (int j = 0; j < mv; j++) c += (double)g[j] * v[j];
	*out = w * c;
}

// vr_back_V: dV[i][j] += Σ_ry dr[ry·mv + j]·exp(P_i[ry] − log Σα[p]).
__global__ void vr_back_V(double* dV, const double* P, const double* la, const real* dr, int p, int B, int NP, int Dw, int m, int mv) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * Dw * mv || !dr) return;
	int j = idx % mv, dd = (idx / mv) % Dw, b = idx / (mv * Dw);
	int i = p - dd - 1;
	if (i < 0) return;
	double z = logZ(la, b, p, NP, m);
	double s = 0;
	for (int ry = 0; ry < m; ry++) {
		double pi = P[((long)b * Dw + dd) * m + ry];
		if (pi != NEG) s += (double)dr[((long)b * m + ry) * mv + j] * exp(pi - z);
	}
	dV[((long)b * NP + i) * mv + j] += s;
}

// vr_back_Z: the share of the reading's gradient through log Σα[p]:
// ∂L/∂α[p][ry] += −(Σ dP)·exp(α[p][ry] − log Σα[p]).
__global__ void vr_back_Z(double* dla, const double* dP, const double* la, int p, int B, int NP, int Dw, int m) {
	int b = blockIdx.x * blockDim.x + threadIdx.x;
	if (b >= B) return;
	double s = 0;
	for (int k = 0; k < Dw * m; k++) s += dP[(long)b * Dw * m + k];
	double z = logZ(la, b, p, NP, m);
	const double* a = la + ((long)b * NP + p) * m;
	double* da = dla + ((long)b * NP + p) * m;
	for (int ry = 0; ry < m; ry++)
		if (a[ry] != NEG) da[ry] -= s * exp(a[ry] - z);
}

// vr_back_P_g: ∂L/∂γ[i→p] through P_i.
__global__ void vr_back_P_g(double* dlg, const double* lg, const double* la, const double* P, const double* dP, int p, int B, int NP, int Dw, int m) {
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= (long)B * Dw * m * m) return;
	int ry = idx % m, qx = (idx / m) % m, dd = (idx / ((long)m * m)) % Dw;
	int b = idx / ((long)m * m * Dw);
	int i = p - dd - 1;
	if (i < 0) return;
	double pi = P[((long)b * Dw + dd) * m + ry], g = dP[((long)b * Dw + dd) * m + ry];
	long o = (((long)b * NP + p) * Dw + dd) * m * m + qx * m + ry;
	double x = la[((long)b * NP + i) * m + qx] + lg[o];
	dlg[o] += share(x, pi, g);
}

// vr_back_P_a: ∂L/∂α[i] through P_i.
__global__ void vr_back_P_a(double* dla, const double* lg, const double* la, const double* P, const double* dP, int p, int B, int NP, int Dw, int m) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * Dw * m) return;
	int qx = idx % m, dd = (idx / m) % Dw, b = idx / (m * Dw);
	int i = p - dd - 1;
	if (i < 0) return;
	double ai = la[((long)b * NP + i) * m + qx];
	const double* g = lg + (((long)b * NP + p) * Dw + dd) * m * m + qx * m;
	double s = 0;
	for (int ry = 0; ry < m; ry++) s += share(ai + g[ry], P[((long)b * Dw + dd) * m + ry], dP[((long)b * Dw + dd) * m + ry]);
	dla[((long)b * NP + i) * m + qx] += s;
}

// vr_back_vec: the gradient of step t's pushed vectors' pre-activations
// (out, B rows of mv), from dV at position p−1.
__global__ void vr_back_vec(real* out, const double* dV, const double* V, int p, int B, int NP, int mv) {
	int idx = blockIdx.x * blockDim.x + threadIdx.x;
	if (idx >= B * mv) return;
	int b = idx / mv, j = idx % mv;
	long o = ((long)b * NP + (p - 1)) * mv + j;
	double v = V[o];
	out[idx] = (real)(dV[o] * v * (1 - v));
}

// vr_back_bottom: the gradient of w_0 (learned bottom: σ(w0)) from dV at
// position 0 (fixed bottom) and the gradient dr0 of r_0 at (0, 0),
// summed over the batch in order.
__global__ void vr_back_bottom(real* dw0, const double* dV, const real* dr0, const real* w0, int fixed, int B, int NP, int m, int mv) {
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= mv) return;
	double s = 0;
	for (int b = 0; b < B; b++) {
		if (fixed) s += dV[((long)b * NP) * mv + j];
		if (dr0) s += (double)dr0[(long)b * m * mv + j];
	}
	double v = 1.0 / (1.0 + exp(-(double)w0[j]));
	dw0[j] = (real)(s * v * (1 - v));
}

} // extern "C"
