"""lucent's napari plugin (npe2; the manifest is ``lucent/napari.yaml``): widgets that run
lucent on image layers, a reader and a writer through lucent's own file formats, and sample
data. Installed with ``pip install "lucent[napari]"``; ``import lucent`` never imports this
package, napari, magicgui or Qt.

Every widget runs its work on a worker thread, one step at a time, with napari's progress bar;
Cancel takes effect between steps (a step is one call of lucent: one plane, volume or time
point, as each widget says), and a cancelled run adds no layer. Results are new layers with the
input's scale and translate (resampling and tomography adjust them to the new grid).
"""
