package io.github.zklock.autoconfigure;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import org.apache.curator.utils.PathUtils;
import org.apache.zookeeper.client.ConnectStringParser;
import org.jspecify.annotations.Nullable;
import org.springframework.validation.Errors;

import io.github.zklock.spi.RequestRules;

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
		Duration defaultWaitTime = properties.getDefaultWaitTime();
		if (defaultWaitTime == null || (defaultWaitTime.isNegative() && !RequestRules.waitsForever(defaultWaitTime))) {
			errors.rejectValue("defaultWaitTime", INVALID, "zk.lock.default-wait-time must be 0 for one attempt, a "
					+ "positive duration, or -1ms to wait without limit, was " + defaultWaitTime);
		}
		Duration defaultLockAtMostFor = properties.getDefaultLockAtMostFor();
		if (defaultLockAtMostFor != null && (defaultLockAtMostFor.isNegative() || defaultLockAtMostFor.isZero())) {
			errors.rejectValue("defaultLockAtMostFor", INVALID, "zk.lock.default-lock-at-most-for must be a positive "
					+ "duration; leave it unset for no ceiling, was " + defaultLockAtMostFor);
		}
		if (properties.getMetrics().getMaxNames() < 1) {
			errors.rejectValue("metrics.maxNames", INVALID,
					"zk.lock.metrics.max-names must be positive, was " + properties.getMetrics().getMaxNames());
		}
		if (properties.getCacheCapacity() < 1) {
			errors.rejectValue("cacheCapacity", INVALID,
					"zk.lock.cache-capacity must be positive, was " + properties.getCacheCapacity());
		}
		validateRootPath(properties.getRootPath(), errors);
		validateKeyPrefix("integration.keyPrefix", "zk.lock.integration.key-prefix", "/spring-integration",
				properties.getIntegration().getKeyPrefix(), errors);
		validateKeyPrefix("shedlock.keyPrefix", "zk.lock.shedlock.key-prefix", "/shedlock",
				properties.getShedlock().getKeyPrefix(), errors);
		validateKeyPrefix("leadership.keyPrefix", "zk.lock.leadership.key-prefix", "/leadership",
				properties.getLeadership().getKeyPrefix(), errors);
		String participantId = properties.getLeadership().getParticipantId();
		if (participantId != null && participantId.isBlank()) {
			errors.rejectValue("leadership.participantId", INVALID, "zk.lock.leadership.participant-id must not be "
					+ "blank; leave it out for the host name and process id");
		}
		positiveMillis(errors, "localHandoff.maxTime", "zk.lock.local-handoff.max-time",
				properties.getLocalHandoff().getMaxTime());
		if (properties.getLocalHandoff().getMaxGrants() < 1) {
			errors.rejectValue("localHandoff.maxGrants", INVALID, "zk.lock.local-handoff.max-grants must be at least 1, "
					+ "was " + properties.getLocalHandoff().getMaxGrants());
		}
		positiveMillis(errors, "keep.maxIdle", "zk.lock.keep.max-idle", properties.getKeep().getMaxIdle());
		positiveMillis(errors, "keep.giveUpWait", "zk.lock.keep.give-up-wait", properties.getKeep().getGiveUpWait());
		if (properties.getKeep().getMaxKeys() < 1) {
			errors.rejectValue("keep.maxKeys", INVALID, "zk.lock.keep.max-keys must be at least 1, was "
					+ properties.getKeep().getMaxKeys());
		}
		Duration revocationCheckInterval = properties.getRevocationCheckInterval();
		if (revocationCheckInterval == null || revocationCheckInterval.isNegative()) {
			errors.rejectValue("revocationCheckInterval", INVALID, "zk.lock.revocation-check-interval must be 0 "
					+ "(revocations ignored) or positive, was " + revocationCheckInterval);
		}
		validateAuth(properties.getAuth(), errors);
		validateSsl(properties, errors);
		validateSasl(properties.getSasl(), errors);
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

	private static void validateKeyPrefix(String field, String property, String example, @Nullable String keyPrefix,
			Errors errors) {
		if (keyPrefix != null && keyPrefix.isEmpty()) {
			return;
		}
		String problem;
		try {
			PathUtils.validatePath(keyPrefix);
			if (!"/".equals(keyPrefix)) {
				return;
			}
			problem = "'/' names no key; leave it empty for keys directly below the root path";
		}
		catch (IllegalArgumentException ex) {
			problem = ex.getMessage();
		}
		errors.rejectValue(field, INVALID, property + " '" + keyPrefix + "' is not a legal lock key (" + problem
				+ "): use a key such as " + example + ", or leave it empty");
	}

	/**
	 * Check a connect string.
	 * @param connectString the value of {@code zk.lock.connect-string}
	 * @return what is wrong with it, or {@code null} if it is well formed
	 */
	static @Nullable String connectStringProblem(@Nullable String connectString) {
		String expected = ", expected host:port[,host:port...][/chroot]";
		if (connectString == null || connectString.isBlank()) {
			return "zk.lock.connect-string must be set" + expected;
		}
		List<InetSocketAddress> servers;
		try {
			servers = new ConnectStringParser(connectString).getServerAddresses();
		}
		catch (IllegalArgumentException ex) {
			return "zk.lock.connect-string '" + connectString + "' is malformed (" + ex.getMessage() + ")" + expected;
		}
		if (servers.isEmpty() || servers.stream().anyMatch((server) -> server.getHostString().isEmpty())) {
			return "zk.lock.connect-string '" + connectString + "' names no server" + expected;
		}
		return null;
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

	private static void validateSsl(ZkLockProperties properties, Errors errors) {
		ZkLockProperties.Ssl ssl = properties.getSsl();
		if (ssl.getBundle() != null && ssl.getBundle().isBlank()) {
			errors.rejectValue("ssl.bundle", INVALID, "zk.lock.ssl.bundle must name a Spring Boot SSL bundle "
					+ "(spring.ssl.bundle.jks.<name> or spring.ssl.bundle.pem.<name>), or be left out");
		}
		if (ssl.isEnabled() && properties.getClientSocket() == ZkLockProperties.ClientSocket.NIO) {
			errors.rejectValue("clientSocket", INVALID, "zk.lock.client-socket=nio cannot be used with "
					+ "zk.lock.ssl: ZooKeeper's TLS client is the netty socket; leave zk.lock.client-socket out");
		}
	}

	/**
	 * Global errors for the password, as for the digest credentials.
	 */
	private static void validateSasl(ZkLockProperties.Sasl sasl, Errors errors) {
		if (sasl.getLoginContext() == null || sasl.getLoginContext().isBlank()) {
			errors.rejectValue("sasl.loginContext", INVALID, "zk.lock.sasl.login-context must name a section of "
					+ "the JAAS configuration, for example Client");
		}
		boolean hasPassword = sasl.getPassword() != null && !sasl.getPassword().isEmpty();
		if (sasl.getUsername() != null && (sasl.getUsername().isBlank() || !hasPassword)) {
			errors.reject(INVALID, "zk.lock.sasl.username and zk.lock.sasl.password must both be set (and not "
					+ "empty) for a DIGEST-MD5 login; the password is not shown");
		}
		else if (sasl.getUsername() == null && hasPassword) {
			errors.reject(INVALID, "zk.lock.sasl.password is set without zk.lock.sasl.username");
		}
		if (sasl.getUsername() != null && !sasl.isEnabled()) {
			errors.reject(INVALID, "zk.lock.sasl.username is set but zk.lock.sasl.enabled=false");
		}
	}

}
