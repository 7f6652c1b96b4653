"""lucent against ASTRA on the GPU machine, beside `lucent` (argv[1], the binary): (1) the geometry against
ASTRA's 2D parallel-beam `cuda` projector on point sources (each sinogram row's centroid and mass,
N = 64 and 63, 12 angles); (2) FBP of the exact Shepp-Logan sinogram (N = 512, 768 angles, ramp)
by lucent and by ASTRA's FBP_CUDA (ram-lak) on the same data, relative L2 against the phantom
inside the inscribed circle; (3) forward projection against exact line integrals (Shepp-Logan N = 512
and a Gaussian N = 256), lucent and ASTRA. Prints JSON lines."""
import json, os, subprocess, sys, tempfile
import numpy as np
import astra

lucent = sys.argv[1]
tmp = tempfile.mkdtemp()

def run(*args):
    subprocess.run([lucent, *args], check=True, capture_output=True)

def astra_fp(img, angles, det):
    vol = astra.create_vol_geom(img.shape[0], img.shape[1])
    proj = astra.create_proj_geom('parallel', 1.0, det, angles)
    pid = astra.create_projector('cuda', proj, vol)
    sid, sino = astra.create_sino(img.astype(np.float32), pid)
    astra.data2d.delete(sid); astra.projector.delete(pid)
    return sino

for n in (64, 63):
    angles = np.linspace(0, np.pi, 12, endpoint=False)
    worst_c, worst_m = 0.0, 0.0
    for (r, c) in [(10, 40), (n // 2, n // 2), (50, 7)]:
        img = np.zeros((n, n), np.float32); img[r, c] = 1.0
        np.save(f"{tmp}/p.npy", img); np.save(f"{tmp}/a.npy", angles.astype(np.float32))
        run("radon", f"{tmp}/p.npy", "-o", f"{tmp}/s.npy", "--angles-file", f"{tmp}/a.npy")
        ours, theirs = np.load(f"{tmp}/s.npy"), astra_fp(img, angles, n)
        k = np.arange(n)
        for a in range(len(angles)):
            co, ct = (ours[a] * k).sum() / ours[a].sum(), (theirs[a] * k).sum() / theirs[a].sum()
            worst_c = max(worst_c, abs(co - ct)); worst_m = max(worst_m, abs(ours[a].sum() - theirs[a].sum()))
    print(json.dumps(dict(check="geometry vs ASTRA (point sources)", n=n, max_centroid_difference_bins=round(float(worst_c), 5), max_mass_difference=round(float(worst_m), 5))), flush=True)

# FBP of the exact sinogram.
n, na = 512, 768
E = [[1, .69, .92, 0, 0, 0], [-.8, .6624, .874, 0, -.0184, 0], [-.2, .11, .31, .22, 0, -18], [-.2, .16, .41, -.22, 0, 18],
     [.1, .21, .25, 0, .35, 0], [.1, .046, .046, 0, .1, 0], [.1, .046, .046, 0, -.1, 0], [.1, .046, .023, -.08, -.605, 0],
     [.1, .023, .023, 0, -.606, 0], [.1, .023, .046, .06, -.605, 0]]
theta = np.arange(na) * np.pi / na
t = np.arange(n) - (n - 1) / 2
sino = np.zeros((na, n))
for A, a, b, x0, y0, phi in E:
    a, b, x0, y0, phi = a * n / 2, b * n / 2, x0 * n / 2, y0 * n / 2, np.radians(phi)
    s2 = (a * np.cos(theta - phi)) ** 2 + (b * np.sin(theta - phi)) ** 2
    tau = t[None, :] - (x0 * np.cos(theta) + y0 * np.sin(theta))[:, None]
    inside = tau ** 2 < s2[:, None]
    sino += np.where(inside, 2 * A * a * b / s2[:, None] * np.sqrt(np.maximum(s2[:, None] - tau ** 2, 0)), 0)
sino = sino.astype(np.float32)
np.save(f"{tmp}/sl.npy", sino)
run("phantom", "-o", f"{tmp}/ph.npy", "--size", str(n))
run("fbp", f"{tmp}/sl.npy", "-o", f"{tmp}/ours.npy", "--method", "logpolar")
run("fbp", f"{tmp}/sl.npy", "-o", f"{tmp}/direct.npy", "--method", "direct")
phantom, ours, direct = np.load(f"{tmp}/ph.npy"), np.load(f"{tmp}/ours.npy"), np.load(f"{tmp}/direct.npy")
vol = astra.create_vol_geom(n, n)
proj = astra.create_proj_geom('parallel', 1.0, n, theta)
rid = astra.data2d.create('-vol', vol, 0); sid = astra.data2d.create('-sino', proj, sino)
cfg = astra.astra_dict('FBP_CUDA'); cfg['ReconstructionDataId'] = rid; cfg['ProjectionDataId'] = sid; cfg['FilterType'] = 'ram-lak'
alg = astra.algorithm.create(cfg); astra.algorithm.run(alg); theirs = astra.data2d.get(rid)
yy, xx = np.mgrid[:n, :n]; mask = (yy - (n - 1) / 2) ** 2 + (xx - (n - 1) / 2) ** 2 < (n / 2 - 1) ** 2
err = lambda x: float(np.linalg.norm((x - phantom)[mask]) / np.linalg.norm(phantom[mask]))
print(json.dumps(dict(check="FBP of the exact Shepp-Logan sinogram, N 512, 768 angles, ramp", lucent_logpolar_rel_l2=round(err(ours), 5), lucent_direct_rel_l2=round(err(direct), 5), astra_rel_l2=round(err(theirs), 5), lucent_vs_astra=round(float(np.linalg.norm((ours - theirs)[mask]) / np.linalg.norm(theirs[mask])), 5))), flush=True)

# Forward projection against exact line integrals: the pixel phantom (Shepp-Logan, N 512, 768
# angles) and a pixel-sampled Gaussian (N 256, sigma 20, 384 angles), by lucent and by ASTRA.
def compare(img, exact, angles, name):
    np.save(f"{tmp}/img.npy", img.astype(np.float32))
    result = {}
    for method in ("logpolar", "direct"):
        run("radon", f"{tmp}/img.npy", "-o", f"{tmp}/fp.npy", "--angles", str(len(angles)), "--method", method)
        result[method] = np.load(f"{tmp}/fp.npy")
    theirs = astra_fp(img, angles, img.shape[0])
    rel = lambda x: float(np.linalg.norm(x - exact) / np.linalg.norm(exact))
    print(json.dumps(dict(check=f"forward projection vs exact line integrals: {name}", lucent_logpolar_rel_l2=round(rel(result["logpolar"]), 6), lucent_direct_rel_l2=round(rel(result["direct"]), 6), astra_rel_l2=round(rel(theirs), 6))), flush=True)

compare(phantom, sino, theta, "Shepp-Logan N 512, 768 angles")
n2, sigma, c0 = 256, 20.0, (7.3, -11.6)
ang2 = np.arange(384) * np.pi / 384
yy, xx = np.mgrid[:n2, :n2]
x, y = xx - (n2 - 1) / 2, (n2 - 1) / 2 - yy
gauss = np.exp(-((x - c0[0]) ** 2 + (y - c0[1]) ** 2) / (2 * sigma ** 2))
t2 = np.arange(n2) - (n2 - 1) / 2
t0 = c0[0] * np.cos(ang2) + c0[1] * np.sin(ang2)
exact2 = sigma * np.sqrt(2 * np.pi) * np.exp(-(t2[None, :] - t0[:, None]) ** 2 / (2 * sigma ** 2))
compare(gauss, exact2, ang2, "Gaussian sigma 20, N 256, 384 angles")
