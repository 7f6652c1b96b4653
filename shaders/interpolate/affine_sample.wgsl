// scipy.ndimage.affine_transform from a storage buffer: an array of 1-4 axes, (order + 1)^d taps
// per sample (common/bspline, common/affine_sample_body).
#import common/real
#import common/bspline
#import common/affine_sample_body

@group(0) @binding(2) var<storage, read> x: array<real>;
