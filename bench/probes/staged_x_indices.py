# Emulates the index arithmetic of the staged data transform (bench/probes/winograd_staged_x.patch,
# not applied: templates/winograd/winograd.cu's `staged` branch) against the pieces branch's direct
# reads (the kernel as built): every position of the tensor GEMM's pieces made once, every point of
# every tile read from the same (image, channel, row, column) or zero. No GPU: it checks the
# indices before the patch's first GPU run, not the kernel. python3 bench/probes/staged_x_indices.py
# (exit status 1 on a mismatch).
import sys
def check(N, C, H, W, m, alpha, off, paired=True):
    # the tiles cover the outputs: out = H + 2 off - r + 1, r = alpha - m + 1
    r = alpha - m + 1
    out0 = H + 2*off - r + 1; out1 = W + 2*off - r + 1
    tiles0 = -(-out0 // m); tiles1 = -(-out1 // m)
    tiles = tiles0 * tiles1
    columns = N * tiles
    rows = -(-columns // 128) * 128
    steps = -(-C // 16)
    positions = rows * steps * 16
    slabs = (tiles1 + 30) // tiles1 + 1
    SW = (min(tiles1, 32) - 1) * m + alpha
    def direct(at):
        piece = at // 2048; within = at % 2048
        block = piece // steps; step = piece % steps
        half = 1 if within >= 1024 else 0; x = within - half*1024
        rho = (x >> 6)*8 + (x >> 2 & 7)
        row = block*128 + ((rho & ~15) + 2*(rho & 7) + (rho >> 3 & 1) if paired else rho)
        s = step*16 + half*8 + (x >> 5 & 1)*4 + (x & 3)
        channel, column = s, row
        real = channel < C and column < columns
        if not real: return None
        outer = column // tiles; tile = column % tiles; t0 = tile // tiles1; t1 = tile % tiles1
        y0 = t0*m - off; x0 = t1*m - off
        return [[(outer, channel, y0+i, x0+j) if 0 <= y0+i < H and 0 <= x0+j < W else 0 for j in range(alpha)] for i in range(alpha)]
    seen = set(); bad = 0
    for b in range(positions // 128):
        piece = b >> 4; q = b & 15
        half = q >> 3; quad = q >> 2 & 1; J = q & 3
        block = piece // steps; step = piece % steps
        first = block*128 + 32*J
        tr0 = first // tiles1; skip = first - tr0*tiles1
        c0 = step*16 + half*8 + quad*4
        slab = {}
        for rr in range(4*slabs*alpha):
            c = rr // (slabs*alpha); s = rr // alpha % slabs; i = rr % alpha
            tr = tr0 + s; outer = tr // tiles0; t0 = tr - outer*tiles0
            y = t0*m - off + i
            x0 = (skip if s == 0 else 0)*m - off
            ok = c0 + c < C and outer < N and 0 <= y < H
            for j in range(SW):
                x = x0 + j
                slab[(c, s, i, j)] = (outer, c0+c, y, x) if ok and 0 <= x < W else 0
        for t in range(128):
            w = t >> 5; lane = t & 31
            at = piece*2048 + half*1024 + (4*J + w)*64 + quad*32 + lane
            assert at not in seen; seen.add(at)
            rho = (4*J + w)*8 + (lane >> 2)
            row = block*128 + ((rho & ~15) + 2*(rho & 7) + (rho >> 3 & 1) if paired else rho)
            channel = c0 + (lane & 3); column = row
            real = channel < C and column < columns
            tr = column // tiles1; t1 = column - tr*tiles1
            s = min(tr - tr0, slabs - 1); frm = (t1 - skip if s == 0 else t1)*m
            base = min(frm, SW - alpha)
            got = [[slab[(lane & 3, s, i, base + j)] for j in range(alpha)] for i in range(alpha)] if real else None
            want = direct(at)
            if got != want:
                bad += 1
                if bad < 3: print("mismatch", (N,C,H,W,m,alpha,off), "block", b, "thread", t, "at", at)
    assert len(seen) == positions and min(seen) == 0 and max(seen) == positions - 1
    print("N%d C%d %dx%d m%d alpha%d pad%d: tiles %dx%d, slabs %d x %d wide, %d positions, %d mismatches" % (N, C, H, W, m, alpha, off, tiles0, tiles1, slabs, SW, positions, bad))
    return bad
bad = 0
for args in [(2, 20, 56, 56, 6, 8, 1), (3, 16, 7, 7, 4, 6, 1), (1, 36, 224, 224, 6, 8, 1), (4, 18, 32, 32, 6, 8, 0), (5, 16, 28, 28, 6, 8, 1), (2, 16, 56, 56, 4, 8, 2), (7, 5, 14, 14, 5, 7, 1), (3, 17, 100, 30, 6, 8, 1)]:
    bad += check(*args)
sys.exit(1 if bad else 0)
