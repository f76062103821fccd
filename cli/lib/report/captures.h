/*
 * captures.h - command-line capture lists: arguments that name a capture
 * file or a directory (standing for its *.dtc files, sorted by name), for
 * the subcommands that take several captures (sql, flame, diff, export).
 */
#ifndef DT_CAPTURES_H
#define DT_CAPTURES_H

struct dtx_caps {
	char	**path;		/* malloc'd copies */
	int	n;
	size_t	cap;		/* of path */
};

/*
 * Expand args[0..n-1] into c (appending).  A directory without .dtc files
 * is an error.  Returns 0, or -1 with a one-line reason in err.
 */
int dtx_caps_add(struct dtx_caps *c, char *const *args, int n, char *err, size_t errlen);
void dtx_caps_free(struct dtx_caps *c);

/* Is arg an existing file or directory (so a capture argument, not SQL)? */
int dtx_is_capture_arg(const char *arg);

/* The name of a capture in a dataset or a multi-capture query: the file
 * name without directories and ".dtc", into out. */
void dtx_capture_name(char *out, size_t outsz, const char *path);

#endif
