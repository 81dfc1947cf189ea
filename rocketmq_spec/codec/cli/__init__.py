"""Console tools over the codec (``rmq-frame``, ``rmq-store``)."""
