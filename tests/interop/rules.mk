# Interop with Kafka 4.4.0's own jars (included by the top Makefile, run from the repository root).
# interop-test: Kafka's decoder reads what rlmeta's encoder writes (a fixed-seed sample of 2,000
# records, field by field and byte for byte), and the harness proves it can fail (selftest).
INTEROP_POM := tests/interop/pom.xml
INTEROP_RUN  = mvn -q -B -f $(INTEROP_POM) compile exec:java -Dexec.mainClass=dev.rlmeta.interop.$(1) -Dexec.args="$(2)"

.PHONY: interop-test interop-vectors
interop-test: $(CONFORMANCE) | $(BUILD)
	$(CONFORMANCE) --sample 2000 1266 > $(BUILD)/rlmeta-sample.json
	$(call INTEROP_RUN,DecodeCheck,$(BUILD)/rlmeta-sample.json $(VECTORS))
	bash tests/interop/selftest.sh

# Regenerates the kafka-4.4.0-*.json vectors from the jars (deterministic; not part of make test).
interop-vectors:
	$(call INTEROP_RUN,VectorWriter,tests/vectors)

BINDING_TESTS += interop-test
