package io.github.zklock.autoconfigure;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import org.apache.curator.utils.PathUtils;
import org.apache.zookeeper.client.ConnectStringParser;
import org.jspecify.annotations.Nullable;
import org.springframework.validation.Errors;

/**
 * The checks behind {@link ZkLockProperties#validate(Object, Errors)}. Field errors are keyed by
 * the Java property path ({@code retry.baseSleep}) so that Spring Boot can show each value's
 * origin; every message starts with the property's configuration name ({@code
 * zk.lock.retry.base-sleep}).
 */
final class ZkLockPropertiesValidator {

	/**
	 * Curator's {@code ExponentialBackoffRetry} caps the retries at 29 (the back-off doubles per
	 * retry and would overflow), and silently uses 29 for anything above.
	 */
	static final int MAX_RETRIES = 29;

	private static final String INVALID = "zk.lock.invalid";

	private ZkLockPropertiesValidator() {
	}

	static void validate(ZkLockProperties properties, Errors errors) {
		positiveMillis(errors, "sessionTimeout", "zk.lock.session-timeout", properties.getSessionTimeout());
		positiveMillis(errors, "connectionTimeout", "zk.lock.connection-timeout", properties.getConnectionTimeout());
		positiveMillis(errors, "retry.baseSleep", "zk.lock.retry.base-sleep", properties.getRetry().getBaseSleep());
		if (properties.getRetry().getMaxSleep() != null) {
			positiveMillis(errors, "retry.maxSleep", "zk.lock.retry.max-sleep", properties.getRetry().getMaxSleep());
		}
		int maxRetries = properties.getRetry().getMaxRetries();
		if (maxRetries < 0 || maxRetries > MAX_RETRIES) {
			errors.rejectValue("retry.maxRetries", INVALID, "zk.lock.retry.max-retries must be between 0 and "
					+ MAX_RETRIES + " (Curator's limit), was " + maxRetries);
		}
		if (properties.getDefaultWaitTime() == null) {
			errors.rejectValue("defaultWaitTime", INVALID,
					"zk.lock.default-wait-time must be set: 0 for one attempt, negative to wait without limit");
		}
		if (properties.getCacheCapacity() < 1) {
			errors.rejectValue("cacheCapacity", INVALID,
					"zk.lock.cache-capacity must be positive, was " + properties.getCacheCapacity());
		}
		int port = properties.getEmbedded().getPort();
		if (port < 0 || port > 65535) {
			errors.rejectValue("embedded.port", INVALID,
					"zk.lock.embedded.port must be between 0 (a free port) and 65535, was " + port);
		}
		validateRootPath(properties.getRootPath(), errors);
		if (!properties.getEmbedded().isEnabled()) {
			validateConnectString(properties.getConnectString(), errors);
		}
		validateAuth(properties.getAuth(), errors);
	}

	private static void positiveMillis(Errors errors, String field, String property, @Nullable Duration duration) {
		if (duration == null || duration.isNegative() || duration.toMillis() < 1
				|| duration.toMillis() > Integer.MAX_VALUE) {
			errors.rejectValue(field, INVALID, property + " must be between 1 ms and " + Integer.MAX_VALUE
					+ " ms (about 24 days), was " + duration);
		}
	}

	private static void validateRootPath(@Nullable String rootPath, Errors errors) {
		String problem;
		try {
			PathUtils.validatePath(rootPath);
			return;
		}
		catch (IllegalArgumentException ex) {
			problem = ex.getMessage();
		}
		errors.rejectValue("rootPath", INVALID, "zk.lock.root-path '" + rootPath + "' is not a legal ZooKeeper path ("
				+ problem + "): use an absolute path such as /locks or /my-app/locks, without a trailing '/', "
				+ "empty, '.' or '..' segments");
	}

	private static void validateConnectString(@Nullable String connectString, Errors errors) {
		String expected = ", expected host:port[,host:port...][/chroot]";
		if (connectString == null || connectString.isBlank()) {
			errors.rejectValue("connectString", INVALID, "zk.lock.connect-string must be set" + expected);
			return;
		}
		List<InetSocketAddress> servers;
		try {
			servers = new ConnectStringParser(connectString).getServerAddresses();
		}
		catch (IllegalArgumentException ex) {
			errors.rejectValue("connectString", INVALID,
					"zk.lock.connect-string '" + connectString + "' is malformed (" + ex.getMessage() + ")" + expected);
			return;
		}
		if (servers.isEmpty() || servers.stream().anyMatch((server) -> server.getHostString().isEmpty())) {
			errors.rejectValue("connectString", INVALID,
					"zk.lock.connect-string '" + connectString + "' names no server" + expected);
		}
	}

	/**
	 * Global errors only: a field error would carry the credentials as its rejected value into
	 * the failure report.
	 */
	private static void validateAuth(ZkLockProperties.Auth auth, Errors errors) {
		if (!auth.hasCredentials()) {
			return;
		}
		if (auth.getScheme() == null || auth.getScheme().isBlank()) {
			errors.reject(INVALID, "zk.lock.auth.scheme must be set when zk.lock.auth.credentials is, for example "
					+ "digest");
			return;
		}
		String credentials = auth.getCredentials();
		if (auth.getScheme().equals("digest") && (credentials.indexOf(':') < 1)) {
			errors.reject(INVALID, "zk.lock.auth.credentials must have the form user:password for the digest "
					+ "scheme (the value is not shown)");
		}
	}

}
