// scipy.ndimage.affine_transform through the texture sampler: an array of 2 or 3 axes in a
// bordered texture (interpolate/spline_texture), 2^d linear fetches per cubic sample
// (common/bspline_texture, common/affine_sample_body).
#import common/bspline_texture
#import common/affine_sample_body

@group(0) @binding(2) var tex: texture_3d<f32>;
@group(0) @binding(3) var lin: sampler;
