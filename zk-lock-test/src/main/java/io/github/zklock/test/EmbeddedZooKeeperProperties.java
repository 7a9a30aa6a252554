package io.github.zklock.test;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties of the in-process ZooKeeper server for development and tests, bound to
 * {@code zk.lock.embedded.*}. Validates itself when bound: a port outside 0..65535 fails the
 * application start with a message that names the property.
 */
@ConfigurationProperties("zk.lock.embedded")
public class EmbeddedZooKeeperProperties implements Validator {

	/**
	 * Whether to start an in-process ZooKeeper server and connect zk-lock's client to it instead
	 * of zk.lock.connect-string.
	 */
	private boolean enabled;

	/**
	 * Client port of the embedded server; 0 picks a free port.
	 */
	private int port;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public int getPort() {
		return this.port;
	}

	public void setPort(int port) {
		this.port = port;
	}

	/**
	 * Whether this validator validates the given class: {@code EmbeddedZooKeeperProperties} and
	 * its subclasses.
	 * @param clazz the class to validate
	 * @return whether instances of the class can be validated
	 */
	@Override
	public boolean supports(Class<?> clazz) {
		return EmbeddedZooKeeperProperties.class.isAssignableFrom(clazz);
	}

	/**
	 * Reject a port outside 0..65535, naming the property.
	 * @param target the properties to validate, this object once bound
	 * @param errors where to record the errors
	 */
	@Override
	public void validate(Object target, Errors errors) {
		int port = ((EmbeddedZooKeeperProperties) target).getPort();
		if (port < 0 || port > 65535) {
			errors.rejectValue("port", "zk.lock.invalid",
					"zk.lock.embedded.port must be between 0 (a free port) and 65535, was " + port);
		}
	}

}
