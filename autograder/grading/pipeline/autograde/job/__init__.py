"""One submission's job, the worker's side: the job as plain data (``spec``), its folder
(``folder``, ``folder_files``), its private gradebook, the limited and sandboxed kernel, and
nbgrader's Autograde run on it (``grade_job``), ending in a ``Status``. Nothing here knows
the cluster, the run or the course's log."""
