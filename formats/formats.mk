# formats: fragment owned by its part of the tree (see Makefile)
