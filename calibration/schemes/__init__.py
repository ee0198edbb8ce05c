"""One module (or small package) per metric family. Each scheme is one seam: records, metrics, hyperparameters."""
