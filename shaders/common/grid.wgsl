// The executor folds large dispatches into 2D/3D grids; kernels see one linear workgroup index.
fn workgroup_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + nwg.x * (wid.y + nwg.y * wid.z);
}
