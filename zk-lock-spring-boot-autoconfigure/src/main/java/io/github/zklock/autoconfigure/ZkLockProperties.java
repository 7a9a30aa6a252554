package io.github.zklock.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.Ordered;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration properties for zk-lock, bound to {@code zk.lock.*}.
 *
 * <p>Validates itself when bound (Spring Boot applies a {@link Validator} implemented by the
 * properties object): a value that makes no sense, such as a zero session timeout, an illegal
 * root path or more than 29 retries, fails the application start with a message that names the
 * property. The connect string is checked when the client is built, and only if it is used.
 * {@code zk.lock.embedded.*} belongs to zk-lock-test.
 */
@ConfigurationProperties("zk.lock")
public class ZkLockProperties implements Validator {

	/**
	 * Whether to enable the zk-lock auto-configuration.
	 */
	private boolean enabled = true;

	/**
	 * ZooKeeper connect string: comma-separated host:port pairs, optionally followed by a chroot
	 * path. Ignored when an EnsembleProvider bean names the ensemble (as the embedded server of
	 * zk-lock-test does).
	 */
	private String connectString = "localhost:2181";

	/**
	 * Znode below which all lock paths live.
	 */
	private String rootPath = "/locks";

	/**
	 * ZooKeeper session timeout. The server bounds it to between 2 and 20 ticks. Locks of a
	 * crashed process are released once it expires.
	 */
	private Duration sessionTimeout = Duration.ofSeconds(60);

	/**
	 * How long Curator waits for a connection before an operation fails.
	 */
	private Duration connectionTimeout = Duration.ofSeconds(15);

	/**
	 * Wait time of locks that do not set one. Zero makes a single attempt; -1ms waits without
	 * limit; other negative values are rejected.
	 */
	private Duration defaultWaitTime = Duration.ofMillis(-1);

	/**
	 * Longest hold of locks that do not set one (lockAtMostFor of @DistributedLock and
	 * @DistributedSemaphore, LockRequest.withLockAtMostFor): once a grant has been held that long,
	 * this application ends it as lost and deletes its znode, so that a stuck holder cannot keep
	 * the key from the others. Covers a running application only; a frozen or dead one frees its
	 * locks with its session. Unset, there is no ceiling; zero and negative values are rejected.
	 */
	private @Nullable Duration defaultLockAtMostFor;

	/**
	 * Order of the @DistributedLock advisor. It must be lower (outer) than the transaction
	 * advisor's order so that the lock is held until the transaction has completed.
	 */
	private int aspectOrder = Ordered.LOWEST_PRECEDENCE - 100;

	/**
	 * How many idle lock paths to keep cached with their state (created again when needed). Paths
	 * being waited on or held are kept beyond it.
	 */
	private int cacheCapacity = 10_000;

	/**
	 * Whether to interrupt the thread that holds a lock when the ZooKeeper session is lost, so
	 * that blocking work under a lost lock stops early. Concerns locks bound to their thread
	 * (reentrant EXCLUSIVE, READ, WRITE), not reentrant = false, permits or lockAtLeastFor. The
	 * work of an asynchronous method of those kinds is cancelled instead, and its result fails
	 * with LockLostException.
	 */
	private boolean interruptOnLost;

	/**
	 * How often held locks are checked for revocation (the zklocks endpoint's DELETE operation,
	 * or Curator's Revoker): the znode of each lock held longer than this gets a data watch (one
	 * ZooKeeper request per lock znode), through which a revocation, or a deletion of the znode by
	 * another client, makes the lock LOST. Locks released sooner send nothing for it. 0 ignores
	 * revocations.
	 */
	private Duration revocationCheckInterval = Duration.ofSeconds(1);

	/**
	 * Whether to wait, at start-up, up to the connection timeout for a first connection to
	 * ZooKeeper and fail the start if none is made. Otherwise the application starts regardless
	 * and lock requests fail until ZooKeeper is reachable.
	 */
	private boolean failFast;

	/**
	 * Socket implementation of the ZooKeeper client. When not set, the one the
	 * zookeeper.clientCnxnSocket system property names, else netty: it tells the holders of locks
	 * as soon as the server closes the connection, where nio tells them 100 ms later.
	 */
	private @Nullable ClientSocket clientSocket;

	/**
	 * Retry policy of failed ZooKeeper operations.
	 */
	private final Retry retry = new Retry();

	/**
	 * Authentication of the ZooKeeper session and ACL of the lock znodes.
	 */
	private final Auth auth = new Auth();

	/**
	 * TLS between the client and the ZooKeeper servers (their secureClientPort).
	 */
	private final Ssl ssl = new Ssl();

	/**
	 * SASL authentication of the ZooKeeper session (DIGEST-MD5 or Kerberos through JAAS).
	 */
	private final Sasl sasl = new Sasl();

	/**
	 * Spring Integration's LockRegistry on zk-lock (with zk-lock-spring-integration).
	 */
	private final Integration integration = new Integration();

	/**
	 * Leader election of {@code @LeaderOnly} methods and the {@code Leadership} bean.
	 */
	private final Leadership leadership = new Leadership();

	/**
	 * ShedLock's LockProvider on zk-lock (with zk-lock-shedlock).
	 */
	private final Shedlock shedlock = new Shedlock();

	/**
	 * Hand-off of a held EXCLUSIVE or WRITE lock to the next waiting thread of this application,
	 * without a ZooKeeper request.
	 */
	private final LocalHandoff localHandoff = new LocalHandoff();

	/**
	 * Kept locks: the znode of an EXCLUSIVE or WRITE key stays with this application after its
	 * last release, held by nobody, until another participant asks for the key; the next grant of
	 * this application on it sends no ZooKeeper write.
	 */
	private final Keep keep = new Keep();

	/**
	 * Store-side fencing: the JdbcLockFence bean, when spring-jdbc is on the class path and the
	 * application has a single DataSource.
	 */
	private final Fence fence = new Fence();

	/**
	 * The lock meters (zk.lock.acquire, zk.lock.held).
	 */
	private final Metrics metrics = new Metrics();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getConnectString() {
		return this.connectString;
	}

	public void setConnectString(String connectString) {
		this.connectString = connectString;
	}

	public String getRootPath() {
		return this.rootPath;
	}

	public void setRootPath(String rootPath) {
		this.rootPath = rootPath;
	}

	public Duration getSessionTimeout() {
		return this.sessionTimeout;
	}

	public void setSessionTimeout(Duration sessionTimeout) {
		this.sessionTimeout = sessionTimeout;
	}

	public Duration getConnectionTimeout() {
		return this.connectionTimeout;
	}

	public void setConnectionTimeout(Duration connectionTimeout) {
		this.connectionTimeout = connectionTimeout;
	}

	public Duration getDefaultWaitTime() {
		return this.defaultWaitTime;
	}

	public void setDefaultWaitTime(Duration defaultWaitTime) {
		this.defaultWaitTime = defaultWaitTime;
	}

	public @Nullable Duration getDefaultLockAtMostFor() {
		return this.defaultLockAtMostFor;
	}

	public void setDefaultLockAtMostFor(@Nullable Duration defaultLockAtMostFor) {
		this.defaultLockAtMostFor = defaultLockAtMostFor;
	}

	public int getAspectOrder() {
		return this.aspectOrder;
	}

	public void setAspectOrder(int aspectOrder) {
		this.aspectOrder = aspectOrder;
	}

	public int getCacheCapacity() {
		return this.cacheCapacity;
	}

	public void setCacheCapacity(int cacheCapacity) {
		this.cacheCapacity = cacheCapacity;
	}

	public boolean isInterruptOnLost() {
		return this.interruptOnLost;
	}

	public void setInterruptOnLost(boolean interruptOnLost) {
		this.interruptOnLost = interruptOnLost;
	}

	public Duration getRevocationCheckInterval() {
		return this.revocationCheckInterval;
	}

	public void setRevocationCheckInterval(Duration revocationCheckInterval) {
		this.revocationCheckInterval = revocationCheckInterval;
	}

	public boolean isFailFast() {
		return this.failFast;
	}

	public void setFailFast(boolean failFast) {
		this.failFast = failFast;
	}

	public @Nullable ClientSocket getClientSocket() {
		return this.clientSocket;
	}

	public void setClientSocket(@Nullable ClientSocket clientSocket) {
		this.clientSocket = clientSocket;
	}

	public Retry getRetry() {
		return this.retry;
	}

	public Auth getAuth() {
		return this.auth;
	}

	public Ssl getSsl() {
		return this.ssl;
	}

	public Sasl getSasl() {
		return this.sasl;
	}

	public Integration getIntegration() {
		return this.integration;
	}

	public Leadership getLeadership() {
		return this.leadership;
	}

	public Shedlock getShedlock() {
		return this.shedlock;
	}

	public LocalHandoff getLocalHandoff() {
		return this.localHandoff;
	}

	public Keep getKeep() {
		return this.keep;
	}

	public Fence getFence() {
		return this.fence;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	/**
	 * Whether this validator validates the given class: {@code ZkLockProperties} and its
	 * subclasses.
	 * @param clazz the class to validate
	 * @return whether instances of the class can be validated
	 */
	@Override
	public boolean supports(Class<?> clazz) {
		return ZkLockProperties.class.isAssignableFrom(clazz);
	}

	/**
	 * Reject values that make no sense. Each error names the property; the credentials are never
	 * put into an error (neither as rejected value nor in the message).
	 * @param target the properties to validate, this object once bound
	 * @param errors where to record the errors
	 */
	@Override
	public void validate(Object target, Errors errors) {
		ZkLockPropertiesValidator.validate((ZkLockProperties) target, errors);
	}

	/**
	 * Socket implementation of the ZooKeeper client (ZooKeeper's {@code zookeeper.clientCnxnSocket}).
	 */
	public enum ClientSocket {

		/**
		 * {@code ClientCnxnSocketNIO}, ZooKeeper's default. It sleeps 100 ms before it reports a
		 * connection that the server closed.
		 */
		NIO,

		/**
		 * {@code ClientCnxnSocketNetty}, on the Netty that the ZooKeeper client depends on. It
		 * reports a connection that the server closed at once.
		 */
		NETTY

	}

	/**
	 * Curator's exponential back-off retry policy for failed ZooKeeper operations.
	 */
	public static class Retry {

		/**
		 * Initial sleep between retries; later sleeps grow exponentially with jitter.
		 */
		private Duration baseSleep = Duration.ofSeconds(1);

		/**
		 * Maximum number of retries (at most 29).
		 */
		private int maxRetries = 3;

		/**
		 * Maximum sleep between two retries. When not set, only Curator's own cap applies.
		 */
		private @Nullable Duration maxSleep;

		public Duration getBaseSleep() {
			return this.baseSleep;
		}

		public void setBaseSleep(Duration baseSleep) {
			this.baseSleep = baseSleep;
		}

		public int getMaxRetries() {
			return this.maxRetries;
		}

		public void setMaxRetries(int maxRetries) {
			this.maxRetries = maxRetries;
		}

		public @Nullable Duration getMaxSleep() {
			return this.maxSleep;
		}

		public void setMaxSleep(@Nullable Duration maxSleep) {
			this.maxSleep = maxSleep;
		}

	}

	/**
	 * Authentication of the ZooKeeper session. When credentials are set, the client authenticates
	 * with them and creates the root path and every lock znode below it with an ACL that grants
	 * all permissions to that identity only ({@code CREATOR_ALL_ACL}): a client without the
	 * credentials can neither delete a lock znode nor queue for the lock.
	 */
	public static class Auth {

		/**
		 * Authentication scheme passed to ZooKeeper with the credentials.
		 */
		private String scheme = "digest";

		/**
		 * Credentials of the scheme; for digest, user:password. Never logged or shown.
		 */
		private @Nullable String credentials;

		public String getScheme() {
			return this.scheme;
		}

		public void setScheme(String scheme) {
			this.scheme = scheme;
		}

		public @Nullable String getCredentials() {
			return this.credentials;
		}

		public void setCredentials(@Nullable String credentials) {
			this.credentials = credentials;
		}

		/**
		 * Return whether credentials are configured, that is whether the session authenticates and
		 * lock znodes are created with a creator-only ACL.
		 * @return whether credentials are set and not empty
		 */
		public boolean hasCredentials() {
			return this.credentials != null && !this.credentials.isEmpty();
		}

		/**
		 * Describe the settings with the credentials masked.
		 * @return for example {@code Auth[scheme=digest, credentials=******]}
		 */
		@Override
		public String toString() {
			return "Auth[scheme=" + this.scheme + ", credentials=" + (hasCredentials() ? "******" : "none") + "]";
		}

	}

	/**
	 * TLS to ZooKeeper's secure client port, with the key and trust material of a Spring Boot SSL
	 * bundle ({@code spring.ssl.bundle.jks.*} or {@code spring.ssl.bundle.pem.*}), as
	 * {@code spring.data.redis.ssl.*} does for Redis.
	 */
	public static class Ssl {

		/**
		 * Whether the client connects with TLS. Enabled when a bundle is set, unless set to false;
		 * without a bundle, the JVM's default trust store is used and no client certificate is sent.
		 */
		private @Nullable Boolean enabled;

		/**
		 * Name of the SSL bundle whose trust store verifies the servers and whose key store, if any,
		 * holds the client certificate (mutual TLS; ZooKeeper's x509 scheme then authenticates the
		 * session).
		 */
		private @Nullable String bundle;

		/**
		 * Return whether TLS is on: as set, or, when not set, whether a bundle is named.
		 * @return whether the client connects with TLS
		 */
		public boolean isEnabled() {
			return (this.enabled != null) ? this.enabled : this.bundle != null;
		}

		public void setEnabled(@Nullable Boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable String getBundle() {
			return this.bundle;
		}

		public void setBundle(@Nullable String bundle) {
			this.bundle = bundle;
		}

	}

	/**
	 * SASL authentication of the ZooKeeper session. The client logs in with a JAAS login context:
	 * the section {@code login-context} of the JAAS configuration ({@code java.security.auth.login.config}),
	 * or, with {@code username} and {@code password}, a DIGEST-MD5 section that zk-lock defines for
	 * this client alone. Lock znodes are then created with a creator-only ACL for the session's
	 * SASL identity.
	 */
	public static class Sasl {

		/**
		 * Whether the session authenticates with SASL. When not set, ZooKeeper's own default
		 * applies: SASL is tried when the JAAS configuration has a section named "Client", and lock
		 * znodes get no creator-only ACL for it.
		 */
		private @Nullable Boolean enabled;

		/**
		 * Name of the JAAS login context (section of the JAAS configuration) to log in with. Not
		 * used with a username, whose section zk-lock defines.
		 */
		private String loginContext = "Client";

		/**
		 * User name of a DIGEST-MD5 login defined by zk-lock, without a JAAS file.
		 */
		private @Nullable String username;

		/**
		 * Password of the DIGEST-MD5 login. Never logged or shown.
		 */
		private @Nullable String password;

		/**
		 * Return whether the session authenticates with SASL: as set, or, when not set, whether a
		 * username is.
		 * @return whether SASL is on
		 */
		public boolean isEnabled() {
			return (this.enabled != null) ? this.enabled : this.username != null;
		}

		/**
		 * Return whether SASL was set explicitly, on or off.
		 * @return whether {@code enabled} or {@code username} is set
		 */
		boolean isConfigured() {
			return this.enabled != null || this.username != null;
		}

		public void setEnabled(@Nullable Boolean enabled) {
			this.enabled = enabled;
		}

		public String getLoginContext() {
			return this.loginContext;
		}

		public void setLoginContext(String loginContext) {
			this.loginContext = loginContext;
		}

		public @Nullable String getUsername() {
			return this.username;
		}

		public void setUsername(@Nullable String username) {
			this.username = username;
		}

		public @Nullable String getPassword() {
			return this.password;
		}

		public void setPassword(@Nullable String password) {
			this.password = password;
		}

		/**
		 * Describe the settings with the password masked.
		 * @return for example {@code Sasl[enabled=true, loginContext=Client, username=app, password=******]}
		 */
		@Override
		public String toString() {
			return "Sasl[enabled=" + isEnabled() + ", loginContext=" + this.loginContext + ", username="
					+ this.username + ", password=" + ((this.password != null) ? "******" : "none") + "]";
		}

	}

	/**
	 * Spring Integration's {@code LockRegistry} on zk-lock, auto-configured when
	 * zk-lock-spring-integration is on the class path: the locks that Spring Integration's
	 * components obtain by key (leader initiators, lock advices, aggregators).
	 */
	public static class Integration {

		/**
		 * Key below the root path under which Spring Integration's lock keys live, each as one
		 * encoded path segment; empty for keys directly below the root path.
		 */
		private String keyPrefix = "/spring-integration";

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

	}

	/**
	 * Leader election: one Curator {@code LeaderLatch} per group, below the root path, for
	 * {@code @LeaderOnly} methods and the {@code Leadership} bean.
	 */
	public static class Leadership {

		/**
		 * Key below the root path under which each group's election znodes live, in a child
		 * named after the group; empty for groups directly below the root path.
		 */
		private String keyPrefix = "/leadership";

		/**
		 * Id of this instance among the participants of an election, shown as the leader in the
		 * health details and the zklocks endpoint; the host name and process id when not set.
		 */
		private @Nullable String participantId;

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public @Nullable String getParticipantId() {
			return this.participantId;
		}

		public void setParticipantId(@Nullable String participantId) {
			this.participantId = participantId;
		}

	}

	/**
	 * ShedLock's {@code LockProvider} on zk-lock, auto-configured when zk-lock-shedlock is on the
	 * class path: the locks of {@code @SchedulerLock} methods, as ephemeral znodes.
	 */
	public static class Shedlock {

		/**
		 * Key below the root path under which ShedLock's lock names live, each as one encoded path
		 * segment; empty for names directly below the root path.
		 */
		private String keyPrefix = "/shedlock";

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

	}

	/**
	 * Local hand-off: when a thread releases an EXCLUSIVE or WRITE lock while another thread of
	 * this application waits for the same key, the lock znode stays and the waiting thread is
	 * granted without a ZooKeeper request. The bounds apply while another participant (another
	 * application) waits in ZooKeeper's queue; with nobody else waiting, a chain of local grants
	 * may go on.
	 */
	public static class LocalHandoff {

		/**
		 * Whether to hand a held lock to the next local waiter; false creates and deletes a znode
		 * per grant.
		 */
		private boolean enabled = true;

		/**
		 * Most grants on one znode while another participant waits.
		 */
		private int maxGrants = io.github.zklock.curator.LocalHandoff.DEFAULT_MAX_GRANTS;

		/**
		 * Longest time one znode is kept, from its grant, while another participant waits.
		 */
		private Duration maxTime = io.github.zklock.curator.LocalHandoff.DEFAULT_MAX_TIME;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxGrants() {
			return this.maxGrants;
		}

		public void setMaxGrants(int maxGrants) {
			this.maxGrants = maxGrants;
		}

		public Duration getMaxTime() {
			return this.maxTime;
		}

		public void setMaxTime(Duration maxTime) {
			this.maxTime = maxTime;
		}

	}

	/**
	 * Kept locks: after the last local grant of an EXCLUSIVE (reentrant) or WRITE key ends, its
	 * znode stays with this application, held by nobody, and a later request of this application
	 * for the key is granted on it without a ZooKeeper write (the lock caching of cluster file
	 * systems' lock managers). The znode is deleted as soon as another participant queues for the
	 * key, after the maximum idle time, beyond the maximum number of kept keys (least recently used
	 * first), on revocation, session loss and shutdown. Another zk-lock application's one-attempt
	 * request waits up to the give-up wait for it rather than answer busy; raw Curator sees the
	 * lock held while it is kept. Off by default; a request can turn it on or off for itself.
	 */
	public static class Keep {

		/**
		 * Whether requests keep their znodes unless they say otherwise.
		 */
		private boolean enabled;

		/**
		 * Longest time a kept znode stays unused before it is deleted.
		 */
		private Duration maxIdle = io.github.zklock.curator.KeptLocks.DEFAULT_MAX_IDLE;

		/**
		 * Most keys kept at once; beyond it the least recently used is deleted.
		 */
		private int maxKeys = io.github.zklock.curator.KeptLocks.DEFAULT_MAX_KEYS;

		/**
		 * Longest wait of a one-attempt request of this application for another application's
		 * kept znode to be given up before it answers busy.
		 */
		private Duration giveUpWait = io.github.zklock.curator.KeptLocks.DEFAULT_GIVE_UP_WAIT;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getMaxIdle() {
			return this.maxIdle;
		}

		public void setMaxIdle(Duration maxIdle) {
			this.maxIdle = maxIdle;
		}

		public int getMaxKeys() {
			return this.maxKeys;
		}

		public void setMaxKeys(int maxKeys) {
			this.maxKeys = maxKeys;
		}

		public Duration getGiveUpWait() {
			return this.giveUpWait;
		}

		public void setGiveUpWait(Duration giveUpWait) {
			this.giveUpWait = giveUpWait;
		}

	}

	/**
	 * Store-side fencing with a {@code JdbcLockFence} on the application's DataSource: a fence table
	 * keyed by lock path that keeps the highest fencing token written per key, so that a write
	 * carrying a lower token is rejected and its transaction rolls back.
	 */
	public static class Fence {

		/**
		 * Fence table, a plain or schema-qualified SQL identifier. Its columns are lock_path
		 * (VARCHAR(1024) PRIMARY KEY) and fencing_token (BIGINT NOT NULL).
		 */
		private String tableName = "zk_lock_fence";

		/**
		 * Whether to create the fence table at start-up, unless it exists (CREATE TABLE IF NOT
		 * EXISTS). Off when the schema is managed elsewhere, such as by Flyway or Liquibase.
		 */
		private boolean initializeSchema;

		public String getTableName() {
			return this.tableName;
		}

		public void setTableName(String tableName) {
			this.tableName = tableName;
		}

		public boolean isInitializeSchema() {
			return this.initializeSchema;
		}

		public void setInitializeSchema(boolean initializeSchema) {
			this.initializeSchema = initializeSchema;
		}

	}

	/**
	 * The lock meters.
	 */
	public static class Metrics {

		/**
		 * Most distinct values of the name tag of the zk.lock meters. A request's name defaults to
		 * its keys, so locks taken through LockTemplate on keys built from data, without
		 * LockRequest.withName, would add meters per key: beyond this many names, no further meter
		 * is made (a warning says so once).
		 */
		private int maxNames = 100;

		public int getMaxNames() {
			return this.maxNames;
		}

		public void setMaxNames(int maxNames) {
			this.maxNames = maxNames;
		}

	}

}
