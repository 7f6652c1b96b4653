// scipy.ndimage.map_coordinates through the texture sampler: an array of 2 or 3 axes in a
// bordered texture (interpolate/spline_texture), 2^d linear fetches per cubic sample
// (common/bspline_texture, common/map_coordinates_body).
#import common/bspline_texture
#import common/map_coordinates_body

@group(0) @binding(3) var tex: texture_3d<f32>;
@group(0) @binding(4) var lin: sampler;
