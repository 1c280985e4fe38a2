//go:build amd64 && !purego

#include "textflag.h"

// The constants of math.Exp's amd64 assembly (src/math/exp_amd64.s, after
// Shibata's SLEEF): LOG2E, LN2U, LN2L, 1/16, the Taylor coefficients
// c8 … c2, 1/2, 1, 2, and the exponent bias.
DATA vexpconst<>+0(SB)/8, $1.4426950408889634073599246810018920
DATA vexpconst<>+8(SB)/8, $0.69314718055966295651160180568695068359375
DATA vexpconst<>+16(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA vexpconst<>+24(SB)/8, $0.0625
DATA vexpconst<>+32(SB)/8, $2.4801587301587301587e-5
DATA vexpconst<>+40(SB)/8, $1.9841269841269841270e-4
DATA vexpconst<>+48(SB)/8, $1.3888888888888888889e-3
DATA vexpconst<>+56(SB)/8, $8.3333333333333333333e-3
DATA vexpconst<>+64(SB)/8, $4.1666666666666666667e-2
DATA vexpconst<>+72(SB)/8, $1.6666666666666666667e-1
DATA vexpconst<>+80(SB)/8, $0.5
DATA vexpconst<>+88(SB)/8, $1.0
DATA vexpconst<>+96(SB)/8, $2.0
DATA vexpconst<>+104(SB)/8, $1023
GLOBL vexpconst<>(SB), RODATA, $112

// func expAsm(dst, src *float64, n int)
//
// math.Exp's fused multiply-add path, eight lanes at a time, for
// arguments whose result is a normal float64 (its overflow, infinity and
// denormal branches are expAll's): k = round(x·LOG2E) (CVTSD2SL, rounding
// to nearest), r = (x − k·LN2U − k·LN2L)/16 (fused), the Taylor polynomial
// of e^r − 1 by Horner (fused), squared four times as e^(2r) − 1 =
// (e^r − 1)(e^r − 1 + 2) (the last fused with + 1), times 2^k.
TEXT ·expAsm(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ vexpconst<>(SB), R8
	VBROADCASTSD 0(R8), Z20  // LOG2E
	VBROADCASTSD 8(R8), Z21  // LN2U
	VBROADCASTSD 16(R8), Z22 // LN2L
	VBROADCASTSD 24(R8), Z23 // 1/16
	VBROADCASTSD 32(R8), Z24 // c8
	VBROADCASTSD 40(R8), Z25 // c7
	VBROADCASTSD 48(R8), Z26 // c6
	VBROADCASTSD 56(R8), Z27 // c5
	VBROADCASTSD 64(R8), Z28 // c4
	VBROADCASTSD 72(R8), Z29 // c3
	VBROADCASTSD 80(R8), Z30 // 1/2
	VBROADCASTSD 88(R8), Z31 // 1
	VBROADCASTSD 96(R8), Z19 // 2
	MOVQ         $1023, AX
	VPBROADCASTQ AX, Z18

loop:
	VMOVUPD   (SI), Z0       // x
	VMULPD    Z20, Z0, Z1    // x·LOG2E
	VCVTPD2DQ Z1, Y2         // k, rounded to nearest
	VCVTDQ2PD Y2, Z1         // float64(k)
	VFNMADD231PD Z21, Z1, Z0 // x −= k·LN2U
	VFNMADD231PD Z22, Z1, Z0 // x −= k·LN2L
	VMULPD    Z23, Z0, Z0    // r = x/16
	VMOVAPD   Z24, Z3
	VFMADD213PD Z25, Z0, Z3  // p = p·r + c7
	VFMADD213PD Z26, Z0, Z3
	VFMADD213PD Z27, Z0, Z3
	VFMADD213PD Z28, Z0, Z3
	VFMADD213PD Z29, Z0, Z3
	VFMADD213PD Z30, Z0, Z3
	VFMADD213PD Z31, Z0, Z3  // … + 1
	VMULPD    Z3, Z0, Z0     // e^r − 1 ≈ r·p
	VADDPD    Z19, Z0, Z3
	VMULPD    Z3, Z0, Z0
	VADDPD    Z19, Z0, Z3
	VMULPD    Z3, Z0, Z0
	VADDPD    Z19, Z0, Z3
	VMULPD    Z3, Z0, Z0
	VADDPD    Z19, Z0, Z3
	VFMADD213PD Z31, Z3, Z0  // e^(16r) = (e^(8r) − 1)(e^(8r) + 1) + 1
	VPMOVSXDQ Y2, Z4         // k as int64
	VPADDQ    Z18, Z4, Z4
	VPSLLQ    $52, Z4, Z4    // 2^k
	VMULPD    Z4, Z0, Z0
	VMOVUPD   Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET
