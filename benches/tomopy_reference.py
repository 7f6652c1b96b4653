"""Reference values for lucent's f64 tomography preprocessing (src/ops/tomography/prep/cpu.rs,
tested in src/tests/prep.rs): TomoPy's functions copied below (TomoPy is not on the package
index) and run in float64, algotom's called directly.

TomoPy source: github.com/tomopy/tomopy commit 2c94ed18a06f7908b018c6f8e43d320f8a8488f2
(source/tomopy/prep/normalize.py, misc/corr.py, prep/stripe.py, prep/phase.py,
recon/rotation.py). The copies change only: float32 casts → float64 (np.float32(1e-6) → 1e-6,
float32 aranges → float64), numexpr → numpy, mproc job splitting → a loop over sinograms or
projections, tomopy.util.misc.fft* → numpy.fft, ndimage.interpolation.shift → ndimage.shift,
and retrieve_phase's edge replication skips a pad width of 0 (TomoPy's prj[-0:] would overwrite
the whole array).

    python benches/tomopy_reference.py > src/tests/prep_reference.txt
"""
import numpy as np
import pywt
import scipy
import scipy.ndimage as ndimage
from scipy.ndimage import median_filter, binary_dilation

import algotom
import algotom.prep.removal as removal


def formula(shape):
    """sin(1.7 i) + 0.3 cos(0.37 i²) in C order (as src/tests/tv.rs)."""
    i = np.arange(int(np.prod(shape)), dtype=np.float64)
    return (np.sin(1.7 * i) + 0.3 * np.cos(0.37 * (i * i))).reshape(shape)


def striped(shape):
    """A sinogram (angles, cols): 2 + formula, plus full stripes at columns 4 (+0.8) and 11
    (−0.6) and a partial one at column 7 (+0.5 on the first half of the angles)."""
    s = 2.0 + formula(shape)
    s[:, 4] += 0.8
    s[:, 11] -= 0.6
    s[: shape[0] // 2, 7] += 0.5
    return s


def blobs(nang, ncol, centre):
    """A sinogram over [0, π) of three Gaussian blobs turning about `centre`, plus 0.05 formula."""
    theta = np.arange(nang) * np.pi / nang
    x = np.arange(ncol, dtype=np.float64)
    s = np.zeros((nang, ncol))
    for r, phi, a, w in [(9.0, 0.3, 1.0, 2.5), (5.0, 2.1, 0.7, 1.5), (14.0, 4.0, 0.5, 3.0)]:
        s += a * np.exp(-(((x[None, :] - centre - r * np.cos(theta[:, None] - phi)) / w) ** 2))
    return s + 0.05 * formula((nang, ncol))


def show(name, a):
    a = np.asarray(a, dtype=np.float64)
    print(f"{name} {list(a.shape)}")
    print(",\n".join(repr(float(v)) for v in a.ravel()))


# ---- prep/normalize.py: normalize (float64; numexpr as numpy) --------------------------------
def normalize(arr, flat, dark, cutoff=None):
    l = 1e-6
    flat = np.mean(flat, axis=0)
    dark = np.mean(dark, axis=0)
    denom = flat - dark
    denom = np.where(denom < l, l, denom)
    out = (arr - dark) / denom
    if cutoff is not None:
        out = np.where(out > cutoff, cutoff, out)
    return out


# ---- misc/corr.py: remove_outlier, axis=0 --------------------------------------------------
def remove_outlier(arr, dif, size=3, axis=0):
    filt_size = [size] * arr.ndim
    filt_size[axis] = 1
    tmp = scipy.ndimage.median_filter(arr, size=filt_size)
    return np.where(arr - tmp >= dif, tmp, arr)


# ---- prep/stripe.py: sorting, large stripes, Fourier-wavelet ----------------------------------
def _create_matindex(nrow, ncol):
    listindex = np.arange(0.0, ncol, 1.0)
    return np.tile(listindex, (nrow, 1))


def _rs_sort(sinogram, size, matindex, dim):
    sinogram = np.transpose(sinogram)
    matcomb = np.asarray(np.dstack((matindex, sinogram)))
    matsort = np.asarray([row[row[:, 1].argsort()] for row in matcomb])
    if dim == 1:
        matsort[:, :, 1] = median_filter(matsort[:, :, 1], (size, 1))
    else:
        matsort[:, :, 1] = median_filter(matsort[:, :, 1], (size, size))
    matsortback = np.asarray([row[row[:, 0].argsort()] for row in matsort])
    return np.transpose(matsortback[:, :, 1])


def remove_stripe_based_sorting(sino, size=None, dim=1):
    """_remove_stripe_based_sorting on one sinogram (tomo[:, m, :])."""
    matindex = _create_matindex(sino.shape[1], sino.shape[0])
    if size is None:
        size = 21 if sino.shape[1] > 2000 else max(5, int(0.01 * sino.shape[1]))
    return _rs_sort(sino, size, matindex, dim)


def _detect_stripe(listdata, snr):
    numdata = len(listdata)
    listsorted = np.sort(listdata)[::-1]
    xlist = np.arange(0, numdata, 1.0)
    ndrop = np.int16(0.25 * numdata)
    (_slope, _intercept) = np.polyfit(xlist[ndrop:-ndrop - 1], listsorted[ndrop:-ndrop - 1], 1)
    numt1 = _intercept + _slope * xlist[-1]
    noiselevel = np.abs(numt1 - _intercept)
    noiselevel = np.clip(noiselevel, 1e-6, None)
    val1 = np.abs(listsorted[0] - _intercept) / noiselevel
    val2 = np.abs(listsorted[-1] - numt1) / noiselevel
    listmask = np.zeros_like(listdata)
    if val1 >= snr:
        upper_thresh = _intercept + noiselevel * snr * 0.5
        listmask[listdata > upper_thresh] = 1.0
    if val2 >= snr:
        lower_thresh = numt1 - noiselevel * snr * 0.5
        listmask[listdata <= lower_thresh] = 1.0
    return listmask


def remove_large_stripe(sinogram, snr=3, size=51, drop_ratio=0.1, norm=True):
    """_rs_large on one sinogram."""
    matindex = _create_matindex(sinogram.shape[1], sinogram.shape[0])
    drop_ratio = np.clip(drop_ratio, 0.0, 0.8)
    (nrow, ncol) = sinogram.shape
    ndrop = int(0.5 * drop_ratio * nrow)
    sinosort = np.sort(sinogram, axis=0)
    sinosmooth = median_filter(sinosort, (1, size))
    list1 = np.mean(sinosort[ndrop:nrow - ndrop], axis=0)
    list2 = np.mean(sinosmooth[ndrop:nrow - ndrop], axis=0)
    listfact = np.divide(list1, list2, out=np.ones_like(list1), where=list2 != 0)
    listmask = _detect_stripe(listfact, snr)
    listmask = binary_dilation(listmask, iterations=1).astype(listmask.dtype)
    matfact = np.tile(listfact, (nrow, 1))
    if norm is True:
        sinogram = sinogram / matfact
    sinogram1 = np.transpose(sinogram)
    matcombine = np.asarray(np.dstack((matindex, sinogram1)))
    matsort = np.asarray([row[row[:, 1].argsort()] for row in matcombine])
    matsort[:, :, 1] = np.transpose(sinosmooth)
    matsortback = np.asarray([row[row[:, 0].argsort()] for row in matsort])
    sino_corrected = np.transpose(matsortback[:, :, 1])
    listxmiss = np.where(listmask > 0.0)[0]
    sinogram[:, listxmiss] = sino_corrected[:, listxmiss]
    return sinogram, listmask


def remove_stripe_fw(sino, level=None, wname='db5', sigma=2, pad=True):
    """remove_stripe_fw's level rule and _remove_stripe_fw on one sinogram (float64)."""
    if level is None:
        level = int(np.ceil(np.log2(np.max(sino.shape))))
    dx, dz = sino.shape
    nx = dx + dx // 8 if pad else dx
    xshift = int((nx - dx) // 2)
    sli = np.zeros((nx, dz))
    sli[xshift:dx + xshift] = sino
    cH, cV, cD = [], [], []
    for n in range(level):
        sli, (cHt, cVt, cDt) = pywt.dwt2(sli, wname)
        cH.append(cHt)
        cV.append(cVt)
        cD.append(cDt)
    for n in range(level):
        fcV = np.fft.fftshift(np.fft.fft(cV[n], axis=0))
        my, mx = fcV.shape
        y_hat = (np.arange(-my, my, 2, dtype='float64') + 1) / 2
        damp = -np.expm1(-np.square(y_hat) / (2 * np.square(sigma)))
        fcV *= np.transpose(np.tile(damp, (mx, 1)))
        cV[n] = np.real(np.fft.ifft(np.fft.ifftshift(fcV), axis=0))
    for n in range(level)[::-1]:
        sli = sli[0:cH[n].shape[0], 0:cH[n].shape[1]]
        sli = pywt.idwt2((sli, (cH[n], cV[n], cD[n])), wname)
    return sli[xshift:dx + xshift, 0:dz]


# ---- prep/phase.py: retrieve_phase ------------------------------------------------------------
SPEED_OF_LIGHT = 299792458e+2  # [cm/s]
PI = 3.14159265359
PLANCK_CONSTANT = 6.58211928e-19  # [keV*s]


def _wavelength(energy):
    return 2 * PI * PLANCK_CONSTANT * SPEED_OF_LIGHT / energy


def _paganin_filter_factor(energy, dist, alpha, w2):
    return 1 / (_wavelength(energy) * dist * w2 / (4 * PI) + alpha)


def _calc_pad_width(dim, pixel_size, wavelength, dist):
    pad_pix = np.ceil(PI * wavelength * dist / pixel_size ** 2)
    return int((pow(2, np.ceil(np.log2(dim + pad_pix))) - dim) * 0.5)


def _calc_pad_val(tomo):
    return np.mean((tomo[..., 0] + tomo[..., -1]) * 0.5)


def _reciprocal_coord(pixel_size, num_grid):
    n = num_grid - 1
    rc = np.arange(-n, num_grid, 2, dtype=np.float64)
    rc *= 0.5 / (n * pixel_size)
    return rc


def _reciprocal_grid(pixel_size, nx, ny):
    indx = _reciprocal_coord(pixel_size, nx)
    indy = _reciprocal_coord(pixel_size, ny)
    return np.add.outer(np.square(indx), np.square(indy))


def retrieve_phase(tomo, pixel_size=1e-4, dist=50, energy=20, alpha=1e-3, pad=True):
    tomo = tomo.copy()
    dx, dy, dz = tomo.shape
    wavelength = _wavelength(energy)
    py, pz, val = 0, 0, 0
    if pad:
        val = _calc_pad_val(tomo)
        py = _calc_pad_width(dy, pixel_size, wavelength, dist)
        pz = _calc_pad_width(dz, pixel_size, wavelength, dist)
    w2 = _reciprocal_grid(pixel_size, dy + 2 * py, dz + 2 * pz)
    phase_filter = np.fft.fftshift(_paganin_filter_factor(energy, dist, alpha, w2))
    prj = np.full((dy + 2 * py, dz + 2 * pz), val, dtype='float64')
    px, py = py, pz  # _retrieve_phase's names
    normalized_phase_filter = phase_filter / phase_filter.max()
    for m in range(dx):
        prj[px:dy + px, py:dz + py] = tomo[m]
        if px > 0:  # (TomoPy has no guard: prj[-0:] is all of prj)
            prj[:px] = prj[px]
            prj[-px:] = prj[-px - 1]
        if py > 0:
            prj[:, :py] = prj[:, py][:, np.newaxis]
            prj[:, -py:] = prj[:, -py - 1][:, np.newaxis]
        fproj = np.fft.fft2(prj)
        fproj *= normalized_phase_filter
        proj = np.real(np.fft.ifft2(fproj))
        if pad:
            proj = proj[px:dy + px, py:dz + py]
        tomo[m] = proj
    return tomo


# ---- recon/rotation.py: find_center_vo on one sinogram ------------------------------------------
def find_center_vo(_tomo, smin=-50, smax=50, srad=6, step=0.25, ratio=0.5, drop=20):
    _tomo_cs = ndimage.gaussian_filter(_tomo, (3, 1), mode='reflect')
    _tomo_fs = ndimage.gaussian_filter(_tomo, (2, 2), mode='reflect')
    assert _tomo.shape[0] * _tomo.shape[1] <= 4e6
    init_cen, coarse = _search_coarse(_tomo_cs, smin, smax, ratio, drop)
    fine_cen, fine = _search_fine(_tomo_fs, srad, step, init_cen, ratio, drop)
    return fine_cen, coarse, fine


def _calculate_metric(shift_col, sino1, sino2, sino3, mask):
    shift_col = 1.0 * np.squeeze(shift_col)
    if np.abs(shift_col - np.floor(shift_col)) == 0.0:
        shift_col = int(shift_col)
        sino_shift = np.roll(sino2, shift_col, axis=1)
        if shift_col >= 0:
            sino_shift[:, :shift_col] = sino3[:, :shift_col]
        else:
            sino_shift[:, shift_col:] = sino3[:, shift_col:]
        mat = np.vstack((sino1, sino_shift))
    else:
        sino_shift = ndimage.shift(sino2, (0, shift_col), order=3, prefilter=True)
        if shift_col >= 0:
            shift_int = int(np.ceil(shift_col))
            sino_shift[:, :shift_int] = sino3[:, :shift_int]
        else:
            shift_int = int(np.floor(shift_col))
            sino_shift[:, shift_int:] = sino3[:, shift_int:]
        mat = np.vstack((sino1, sino_shift))
    return np.mean(np.abs(np.fft.fftshift(np.fft.fft2(mat))) * mask)


def _search_coarse(sino, smin, smax, ratio, drop):
    (nrow, ncol) = sino.shape
    cen_fliplr = (ncol - 1.0) / 2.0
    smin = np.int16(np.clip(smin + cen_fliplr, 0, ncol - 1) - cen_fliplr)
    smax = np.int16(np.clip(smax + cen_fliplr, 0, ncol - 1) - cen_fliplr)
    start_cor = ncol // 2 + smin
    stop_cor = ncol // 2 + smax
    flip_sino = np.fliplr(sino)
    comp_sino = np.flipud(sino)
    list_cor = np.arange(start_cor, stop_cor + 0.5, 0.5)
    mask = _create_mask(2 * nrow, ncol, 0.5 * ratio * ncol, drop)
    list_shift = 2.0 * (list_cor - cen_fliplr)
    list_metric = np.array([_calculate_metric(s, sino, flip_sino, comp_sino, mask) for s in list_shift])
    return list_cor[np.argmin(list_metric)], (list_cor, list_metric)


def _search_fine(sino, srad, step, init_cen, ratio, drop):
    (nrow, ncol) = sino.shape
    cen_fliplr = (ncol - 1.0) / 2.0
    srad = np.clip(np.abs(srad), 1.0, ncol / 4.0)
    step = np.clip(np.abs(step), 0.1, srad)
    init_cen = np.clip(init_cen, srad, ncol - srad - 1)
    list_cor = init_cen + np.arange(-srad, srad + step, step)
    flip_sino = np.fliplr(sino)
    comp_sino = np.flipud(sino)
    mask = _create_mask(2 * nrow, ncol, 0.5 * ratio * ncol, drop)
    list_shift = 2.0 * (list_cor - cen_fliplr)
    list_metric = np.array([_calculate_metric(s, sino, flip_sino, comp_sino, mask) for s in list_shift])
    return list_cor[np.argmin(list_metric)], (list_cor, list_metric)


def _create_mask(nrow, ncol, radius, drop):
    du = 1.0 / ncol
    dv = (nrow - 1.0) / (nrow * 2.0 * np.pi)
    cen_row = np.int16(np.ceil(nrow / 2.0) - 1)
    cen_col = np.int16(np.ceil(ncol / 2.0) - 1)
    drop = min(drop, np.int16(np.ceil(0.05 * nrow)))
    mask = np.zeros((nrow, ncol), dtype='float32')
    for i in range(nrow):
        pos = np.int16(np.ceil(((i - cen_row) * dv / radius) / du))
        (pos1, pos2) = np.clip(np.sort((-pos + cen_col, pos + cen_col)), 0, ncol - 1)
        mask[i, pos1:pos2 + 1] = 1.0
    mask[cen_row - drop:cen_row + drop + 1, :] = 0.0
    mask[:, cen_col - 1:cen_col + 2] = 0.0
    return mask


def main():
    np.set_printoptions(precision=17)
    print(f"numpy {np.__version__}, scipy {scipy.__version__}, PyWavelets {pywt.__version__}, "
          f"algotom {algotom.__version__ if hasattr(algotom, '__version__') else '1.7.0'}")

    proj = 2.0 + formula((3, 4, 5))
    flat = 3.0 + 0.5 * formula((2, 4, 5))
    dark = 0.2 * formula((3, 4, 5))
    flat[:, 1, 2] = dark[:, 1, 2].mean()  # flat − dark = 0 there: the 1e-6 floor
    show("normalize", normalize(proj, flat, dark))
    show("normalize cutoff=1.1", normalize(proj, flat, dark, cutoff=1.1))

    x = formula((4, 5))
    x[0, 0], x[1, 1] = 0.0, 1e-9
    show("minus_log floor=1e-6", -np.log(np.maximum(x, 1e-6)))

    arr = formula((3, 11, 9))
    arr[0, 2, 3] += 3.0
    arr[1, 10, 8] += 2.0
    arr[2, 5, 0] -= 3.0
    show("remove_outlier dif=0.5 size=3", remove_outlier(arr, 0.5, 3))
    show("remove_outlier dif=0.3 size=4", remove_outlier(arr, 0.3, 4))
    show("remove_outlier dif=0.2 size=13", remove_outlier(arr, 0.2, 13))

    sino = striped((23, 17))
    show("sorting size=None dim=1", remove_stripe_based_sorting(sino.copy()))
    show("sorting size=3 dim=2", remove_stripe_based_sorting(sino.copy(), 3, 2))
    show("sorting size=20 dim=1", remove_stripe_based_sorting(sino.copy(), 20, 1))
    show("algotom sorting size=5 dim=1 (float32)", removal.remove_stripe_based_sorting(sino, 5, 1))

    for args in [(3, 51, 0.1, True), (1.5, 5, 0.1, True), (1.5, 5, 0.3, False)]:
        out, mask = remove_large_stripe(sino.copy(), *args)
        print("mask", args, mask)
        show("large_stripe snr={} size={} drop_ratio={} norm={}".format(*args), out)
        print("algotom (float32), max |difference|:",
              np.abs(removal.remove_large_stripe(sino, *args) - out).max())
        print("algotom's detect_stripe mask:", removal.util.detect_stripe(
            np.mean(np.sort(sino, 0), 0) / np.mean(median_filter(np.sort(sino, 0), (1, args[1])), 0), args[0]))

    show("fw level=None sigma=2 pad=True", remove_stripe_fw(sino))
    show("fw level=2 sigma=1.5 pad=False", remove_stripe_fw(sino, 2, 'db5', 1.5, False))

    tomo = 1.0 + 0.1 * formula((3, 11, 9))
    show("retrieve_phase defaults", retrieve_phase(tomo))
    show("retrieve_phase pixel=2e-4 dist=30 energy=25 alpha=0.01 pad=False",
         retrieve_phase(tomo, 2e-4, 30, 25, 0.01, False))
    print("pad widths (11, 9):", [_calc_pad_width(n, 1e-4, _wavelength(20), 50) for n in (11, 9)])

    # (Blobs on a zero background: the metric is flat far out, where the shifted halves no
    # longer overlap, so the searches stay within ±10 of the middle.)
    s = blobs(90, 64, 35.3)
    cen, coarse, fine = find_center_vo(s, -10, 10)
    print("find_center_vo blobs(90, 64, 35.3) smin=-10 smax=10", repr(float(cen)))
    show("coarse centres", coarse[0])
    show("coarse metrics", coarse[1])
    show("fine centres", fine[0])
    show("fine metrics", fine[1])
    cen2, _, _ = find_center_vo(s, -8, 12, 3, 0.3, 0.7, 4)
    print("find_center_vo smin=-8 smax=12 srad=3 step=0.3 ratio=0.7 drop=4", repr(float(cen2)))
    s3 = blobs(40, 33, 14.6)
    print("find_center_vo blobs(40, 33, 14.6) smin=-6 smax=6", repr(float(find_center_vo(s3, -6, 6)[0])))
    print("  in float32:", repr(float(find_center_vo(np.float32(s3), -6, 6)[0])))

if __name__ == "__main__":
    main()
