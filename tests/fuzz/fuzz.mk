test-fuzz:
	@echo "  FUZZ    (no targets yet)"
.PHONY: test-fuzz
