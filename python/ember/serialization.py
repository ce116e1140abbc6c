"""ember.save / ember.load: checkpoints as safetensors plus JSON metadata."""
