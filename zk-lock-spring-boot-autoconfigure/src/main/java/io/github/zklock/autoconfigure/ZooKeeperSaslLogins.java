package io.github.zklock.autoconfigure;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.AppConfigurationEntry.LoginModuleControlFlag;
import javax.security.auth.login.Configuration;

import org.jspecify.annotations.Nullable;

/**
 * DIGEST-MD5 logins of {@code zk.lock.sasl.username} and {@code password}, without a JAAS file.
 *
 * <p>The ZooKeeper client reads its login from the JVM-wide JAAS {@link Configuration}, by the
 * section name of its own {@code ZKClientConfig} ({@code zookeeper.sasl.clientconfig}). So each
 * login gets a section name of its own ({@code zk-lock-sasl-<n>}), answered by a configuration
 * installed once per JVM that answers every other name as the configuration it replaced did
 * (a JAAS file of {@code java.security.auth.login.config}, or one set by the application): the
 * sections of other ZooKeeper clients, Kafka, Kerberos logins stay as they were.
 *
 * <p>Thread rules: {@link #register} may be called from any thread.
 */
final class ZooKeeperSaslLogins extends Configuration {

	/** ZooKeeper's login module for DIGEST-MD5 (client and server side). */
	static final String DIGEST_LOGIN_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule";

	private static final AtomicInteger sections = new AtomicInteger();

	private static final Map<String, AppConfigurationEntry[]> entries = new ConcurrentHashMap<>();

	private final @Nullable Configuration previous;

	private ZooKeeperSaslLogins(@Nullable Configuration previous) {
		this.previous = previous;
	}

	/**
	 * Define a DIGEST-MD5 login section for one client.
	 * @param username the user name
	 * @param password the password
	 * @return the section's name, for {@code zookeeper.sasl.clientconfig}
	 */
	static String register(String username, String password) {
		install();
		String name = "zk-lock-sasl-" + sections.incrementAndGet();
		entries.put(name, new AppConfigurationEntry[] { new AppConfigurationEntry(DIGEST_LOGIN_MODULE,
				LoginModuleControlFlag.REQUIRED, Map.of("username", username, "password", password)) });
		return name;
	}

	/**
	 * Forget a section (its client is closed).
	 * @param name the section's name
	 */
	static void unregister(String name) {
		entries.remove(name);
	}

	/**
	 * Return whether the JVM's JAAS configuration has a section.
	 * @param name the section's name
	 * @return whether it has entries
	 */
	static boolean hasSection(String name) {
		try {
			AppConfigurationEntry[] found = Configuration.getConfiguration().getAppConfigurationEntry(name);
			return found != null && found.length > 0;
		}
		catch (SecurityException | IllegalArgumentException ex) {
			// no JAAS file, or one that cannot be read
			return false;
		}
	}

	private static synchronized void install() {
		Configuration current = currentOrNull();
		if (current instanceof ZooKeeperSaslLogins) {
			return;
		}
		Configuration.setConfiguration(new ZooKeeperSaslLogins(current));
	}

	private static @Nullable Configuration currentOrNull() {
		try {
			return Configuration.getConfiguration();
		}
		catch (SecurityException ex) {
			// no JAAS file configured, or it cannot be read: there is nothing to delegate to
			return null;
		}
	}

	@Override
	public AppConfigurationEntry @Nullable [] getAppConfigurationEntry(String name) {
		AppConfigurationEntry[] own = entries.get(name);
		if (own != null) {
			return own;
		}
		return (this.previous != null) ? this.previous.getAppConfigurationEntry(name) : null;
	}

	@Override
	public void refresh() {
		if (this.previous != null) {
			this.previous.refresh();
		}
	}

}
