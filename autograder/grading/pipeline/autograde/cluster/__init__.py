"""Where jobs run: this process's local Dask cluster or an existing one, the worker's task,
and the processes a job or a run leaves behind. A run reaches it through ``dask_cluster``."""
