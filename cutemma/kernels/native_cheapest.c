/* cost._cheapest compiled: the same two passes over the same figures, each float computed
 * in the same order as the Python (no contraction into FMAs: the build passes
 * -ffp-contract=off), so that the pick is the same bit for bit
 * (tests/kernels/test_native_cheapest.py holds the two equal on drawn calls).
 *
 * The tables come packed by native_cheapest.py as arrays of doubles (every int in them is
 * exact: at most 2**53): the device's constants in one, each view's groups in their own
 * (kept with the group tuple they pack), and a plan of addresses and counts that names them
 * (uint64); the layout is written there, next to the packer. */
#include <math.h>
#include <stdint.h>

#define LATER_MAX 512

typedef int64_t i64;

/* a ceiling division of a >= 0 by b > 0 */
static inline i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

/* streamk.shared_tiles */
static i64 shared_tiles(i64 tiles_m, i64 tiles_n, i64 grid, double full) {
    i64 tiles = tiles_m * tiles_n;
    if ((double)tiles / (double)(ceil_div(tiles, grid) * grid) >= full) return 0;
    if (tiles <= grid || tiles_m == 1 || tiles_n == 1)
        return tiles < 2 * grid ? tiles : tiles % grid + grid;
    return tiles % grid;
}

/* cost._us_limit */
static double us_limit(double t, double d0, double p, double ip, double launch) {
    double x = t * 1e6 - launch;
    if (!(1e-3 * launch < x && x < INFINITY)) return INFINITY;
    double room = pow(x, p) - d0;
    if (room > 1e-3 * d0) return pow(room, ip) * (1 + 1e-6);
    return room < -1e-3 * d0 ? -1.0 : INFINITY;
}

/* a stream-K tile kept by the first pass for the second */
typedef struct {
    double low, k_us, whole_tile;
    i64 w, swap, tn, kt, tiles;
    const double *part;
} later_t;

/* (w, i) < (bw, bi) */
static inline int earlier(i64 w, i64 i, i64 bw, i64 bi) { return w < bw || (w == bw && i < bi); }

/* The least price of the packed tables on an (m, n, k) call of `batch` problems (each
 * count under 2**31: the caller checks). `plan`: the address of the device's constants,
 * the count of tables, then each table's address; a table: its count of views, then per
 * view whether it is swapped, its count of groups and their address. *seconds gets the
 * price, and the return value is its table times 2**32 plus its index there; -1 where the
 * call keeps more stream-K tiles than LATER_MAX (the caller then prices it in Python). */
i64 cheapest(const uint64_t *plan, int m_, int n_, int k_, int batch_, double *seconds) {
    const i64 m = m_, n = n_, k = k_, batch = batch_;
    const double *buf = (const double *)(uintptr_t)plan[0];
    const i64 ntables = (i64)plan[1];
    const i64 eb = (i64)buf[0], grid = (i64)buf[1];
    const double p = buf[2], ip = buf[3], launch = buf[4], reread = buf[5];
    const double tile_us = buf[6], dram = buf[7], load = buf[8];
    const i64 reads_once_rows = (i64)buf[9];
    const double full = buf[10];
    const i64 iters_max = (i64)buf[11];
    const i64 fields = (i64)buf[12]; /* a group's fields before its stream-K part */

    const i64 once0 = batch * (m + n) * k * eb;
    const double d0 = pow((double)(once0 + batch * m * n * 2) / dram, p);
    const int bounded = batch == 1 && k <= iters_max / (2 * grid) && tile_us >= 0 && reread >= 0;
    const int one = batch == 1;

    /* the first pass: _whole_prices */
    double bt = INFINITY, bu = INFINITY, above = INFINITY;
    i64 bw = -1, bi = -1;
    later_t later[LATER_MAX];
    int nlater = 0;
    const i64 k1 = k - 1;
    i64 kt_bk = 0, kt = 0;
    for (i64 w = 0; w < ntables; w++) {
        const uint64_t *table = (const uint64_t *)(uintptr_t)plan[2 + w];
        for (i64 v = 0; v < (i64)table[0]; v++) {
            const uint64_t *view = table + 1 + 3 * v;
            const i64 swap = (i64)view[0], ngroups = (i64)view[1];
            const double *at = (const double *)(uintptr_t)view[2];
            const i64 mk = swap ? n : m, nk = swap ? m : n;
            const i64 mk1 = mk - 1, nk1 = nk - 1;
            for (i64 g = 0; g < ngroups; g++) {
                const double *e = at;
                const i64 part_len = (i64)e[fields - 1];
                at += fields + part_len;
                if (mk <= (i64)e[0]) continue; /* dominated */
                const i64 bm = (i64)e[1], bn = (i64)e[2], bmp = (i64)e[3], bnp = (i64)e[4];
                const int paired = e[5] != 0;
                const i64 bk = (i64)e[9];
                double k_us = e[10];
                i64 index = (i64)e[18];
                if (e[11] != 0 && (mk < bm || nk < bn)) { /* clamp */
                    const double flop_us = e[12], ha = e[14], hb = e[15], ca = e[16], cb = e[17];
                    const i64 bkeb = (i64)e[13];
                    const i64 rm = mk < bm ? mk : bm, rn = nk < bn ? nk : bn;
                    if (bkeb) {
                        k_us = (double)((rm + rn) * bkeb) / load;
                    } else {
                        double a = (double)rm * ha / ca;
                        k_us = ((a + (double)rn * hb / cb) * (double)bk) * (double)eb / load;
                    }
                    if (k_us < flop_us) k_us = flop_us;
                }
                if (bk != kt_bk) { kt_bk = bk; kt = k1 / bk + 1; }
                i64 tm = mk1 / bmp + 1, tn = nk1 / bnp + 1;
                if (paired) { tm *= (i64)e[6]; tn *= (i64)e[7]; }
                const i64 tiles = tm * tn;
                const double whole_tile = (double)kt * k_us + tile_us;
                const i64 waves = ceil_div(tiles, grid);
                if (part_len) {
                    const double *part = e + fields;
                    if ((double)tiles / (double)(waves * grid) >= full) {
                        index = (i64)part[0]; /* nothing shared */
                    } else {
                        double low = (double)tiles * (whole_tile - tile_us) / (double)grid
                                     + tile_us + part[1];
                        if (low <= above || !bounded || (w == bw && (i64)part[2] < bi)) {
                            if (nlater == LATER_MAX) return -1;
                            later_t *l = &later[nlater++];
                            l->low = low; l->w = w; l->swap = swap; l->tn = tn;
                            l->kt = kt; l->k_us = k_us; l->whole_tile = whole_tile;
                            l->tiles = tiles; l->part = part;
                        }
                    }
                }
                if (index >= 0) {
                    double us = (double)(one ? waves : ceil_div(tiles * batch, grid)) * whole_tile;
                    if (paired) us += e[8];
                    if (us < bu || (w == bw && index < bi)) {
                        double t = (pow(pow(us, p) + d0, ip) + launch) * 1e-6;
                        if (t < bt || (t == bt && earlier(w, index, bw, bi))) {
                            bt = t; bw = w; bi = index; bu = us;
                            above = us * (1 + 1e-12);
                        }
                    }
                }
            }
        }
    }

    /* the second pass: _shared_prices, least bound first (a stable sort, as list.sort) */
    if (nlater) {
        for (int a = 1; a < nlater; a++) {
            later_t x = later[a];
            int b = a - 1;
            while (b >= 0 && later[b].low > x.low) { later[b + 1] = later[b]; b--; }
            later[b + 1] = x;
        }
        const i64 out_bytes = batch * m * n * 2;
        const int ordered = reread >= 0;
        double limit = us_limit(bt, d0, p, ip, launch);
        for (int a = 0; a < nlater; a++) {
            const later_t *l = &later[a];
            if (l->low > limit && bounded) break;
            const double *part = l->part;
            const i64 idle = (i64)part[0];
            const double least_fix = part[1];
            const i64 bmn = (i64)part[3], cap = (i64)part[4];
            const double partial_us = part[5], together_us = part[6];
            /* (the splits' prices sit in an array of their own, shared by every tile of
             * those splits: its address, exact in a double, then the indices) */
            const double *prices = (const double *)(uintptr_t)part[8];
            const double *indices = part + 9;
            const i64 w = l->w, kt = l->kt, tiles = l->tiles;
            const double k_us = l->k_us, whole_tile = l->whole_tile;
            const i64 sk = shared_tiles(tiles / l->tn, l->tn, grid, full);
            if (sk * kt > iters_max) {
                double t = (pow(pow((double)ceil_div(tiles * batch, grid) * whole_tile, p) + d0, ip) + launch) * 1e-6;
                if (t < bt || (t == bt && earlier(w, idle, bw, bi))) { bt = t; bw = w; bi = idle; }
                continue;
            }
            const i64 per_sk = grid / sk;
            const int one_wave = tiles <= grid;
            const i64 room = per_sk < kt ? per_sk : kt;
            const double done = (double)((tiles * batch - sk) / grid) * whole_tile;
            const i64 rc = room < cap ? room : cap;
            double least = 0;
            if (room) least = done + (double)ceil_div(kt, rc) * k_us + tile_us + least_fix;
            if (!room || one_wave) {
                double grid_us = done + (double)ceil_div(sk * kt, grid) * k_us + tile_us
                                 + partial_us * (double)(per_sk ? per_sk : 1);
                least = (!room || grid_us < least) ? grid_us : least;
            }
            if (ordered && least > limit) continue;
            const i64 own = sk * bmn * k * eb - once0;
            const double d = pow(((double)once0 + reread * (double)(own > 0 ? own : 0) + (double)out_bytes) / dram, p);
            const double d_aligned = (l->swap || m > reads_once_rows) ? d0 : d;
            if ((pow(pow(least, p) + (d < d_aligned ? d : d_aligned), ip) + launch) * 1e-6 > bt) continue;
            /* the split prices for this room: count, then (j, per, together, aligned) each */
            const i64 slot = rc + (one_wave ? cap + 1 : 0);
            const double *how = prices;
            for (i64 s = 0; s < slot; s++) how += 1 + 4 * (i64)how[0];
            const i64 count = (i64)how[0];
            for (i64 c = 0; c < count; c++) {
                const double *h = how + 1 + 4 * c;
                const i64 j = (i64)h[0];
                i64 per = (i64)h[1];
                double us;
                if (per) {
                    us = (double)ceil_div(kt, per) * k_us;
                } else {
                    us = (double)ceil_div(sk * kt, grid) * k_us;
                    per = per_sk ? per_sk : 1;
                }
                us = done + us + tile_us + (h[2] != 0 ? together_us : partial_us * (double)per);
                if (ordered && us > limit) continue;
                double t = (pow(pow(us, p) + (h[3] != 0 ? d_aligned : d), ip) + launch) * 1e-6;
                const i64 idx = (i64)indices[j];
                if (t < bt || (t == bt && earlier(w, idx, bw, bi))) {
                    bt = t; bw = w; bi = idx;
                    limit = us_limit(t, d0, p, ip, launch);
                }
            }
        }
    }
    *seconds = bt;
    return bw * ((i64)1 << 32) + bi;
}
