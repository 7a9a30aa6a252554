package io.github.zklock.curator;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Prepares a class of model-checked tests ({@link Interleavings#prepare()}: quiet loggers, the
 * classes transformed by a warm-up schedule) before its tests, and restores the loggers after.
 */
final class InterleavingsExtension implements BeforeAllCallback, AfterAllCallback {

	@Override
	public void beforeAll(ExtensionContext context) {
		Interleavings.prepare();
	}

	@Override
	public void afterAll(ExtensionContext context) {
		Interleavings.restore();
	}

}
