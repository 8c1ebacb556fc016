"""Code similarity across a cohort: what each student wrote, compared with copydetect."""
