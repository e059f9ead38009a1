"""assay-template: copy this folder to start an assay plugin."""
