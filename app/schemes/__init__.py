"""Each scheme's app side, one package per scheme (`app/schemes/<name>/`: io, store, services, views, llm,
commands), beside its pure library package `calibration/schemes/<name>/`. A package's __init__ holds only its
`MANIFEST` (what it contributes, app/schemes/contracts.py); app/schemes/loader.py finds and checks them. Generic
code reaches a scheme through the loader's typed parts, never by importing a scheme module."""
