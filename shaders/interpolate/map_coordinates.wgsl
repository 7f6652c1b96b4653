// scipy.ndimage.map_coordinates from a storage buffer: an array of 1-4 axes (already prefiltered
// and padded for orders above 1), (order + 1)^d taps per sample (common/bspline,
// common/map_coordinates_body).
#import common/real
#import common/bspline
#import common/map_coordinates_body

@group(0) @binding(3) var<storage, read> x: array<real>;
