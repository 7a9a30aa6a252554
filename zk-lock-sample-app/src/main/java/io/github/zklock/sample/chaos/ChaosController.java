package io.github.zklock.sample.chaos;

import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.server.ResponseStatusException;

/**
 * The fault campaign's workloads over HTTP, below {@code /chaos} (profile {@code chaos} only).
 * Every write takes an operation id {@code op} chosen by the caller (1 to 100 characters) and
 * records it with the committed rows, so that a checker can match the caller's history with the
 * database (tables: see the package description).
 * <ul>
 * <li>{@code POST /counter/fenced/{name}?op=...}: {@link CounterService#incrementFenced};</li>
 * <li>{@code POST /counter/unfenced/{name}?op=...}: {@link CounterService#incrementUnfenced};</li>
 * <li>{@code POST /counter/async/{name}?op=...}: {@link CounterService#incrementAsync}; give its
 * counters names of their own;</li>
 * <li>each answered with a {@link CounterIncrement}: {@code {"op":"o-1","counter":"c1","value":42,
 * "token":37,"instance":"app-1","via":"fenced","lostAfterCommit":false}};</li>
 * <li>{@code GET /counter/{name}}: {@link CounterState} {@code {"name":"c1","value":42,"ops":42}},
 * no lock;</li>
 * <li>{@code POST /accounts?count=N&balance=B[&reset=true]}: {@link TransferService#open},
 * answered with {@code {"created":N,"count":N,"sum":..,"minBalance":..,"transfers":0}};</li>
 * <li>{@code POST /transfer?from=1&to=2&amount=5&op=...}: {@link TransferService#transfer},
 * answered with a {@link Transfer} {@code {"op":..,"from":1,"to":2,"amount":5,"fromBalance":..,
 * "toBalance":..,"fromToken":..,"toToken":..,"instance":..}};</li>
 * <li>{@code GET /accounts}: {@link AccountsState}
 * {@code {"count":..,"sum":..,"minBalance":..,"transfers":..}}, no lock.</li>
 * </ul>
 * A counter name is 1 to 100 letters, digits, {@code .}, {@code _} or {@code -}, starting with a
 * letter or digit; account ids are 0 to N-1.
 *
 * <p>Errors are flat JSON objects {@code {"error": "...", "message": "...", "op": "..."}} (see
 * {@link ChaosExceptionHandler}). Every answer but 200 and 500 means that nothing was committed:
 * <table>
 * <caption>Error answers</caption>
 * <tr><th>status</th><th>{@code error}</th><th>cause</th></tr>
 * <tr><td>400</td><td>{@code bad-request}</td><td>a malformed parameter (not run)</td></tr>
 * <tr><td>404</td><td>{@code unknown-account}</td><td>an account has no row (rolled back)</td></tr>
 * <tr><td>409</td><td>{@code stale-token}</td><td>the row's fence refused the grant's token: a
 * newer grant wrote it, this instance was a zombie (rolled back)</td></tr>
 * <tr><td>409</td><td>{@code insufficient-balance}</td><td>the account to debit has less than the
 * amount (rolled back)</td></tr>
 * <tr><td>410</td><td>{@code lock-lost}</td><td>the grant was known lost or in doubt before the
 * write or at the commit guard (rolled back)</td></tr>
 * <tr><td>423</td><td>{@code lock-busy}</td><td>the lock was not granted within
 * {@code zk.lock.default-wait-time} (not run)</td></tr>
 * <tr><td>503</td><td>{@code zookeeper-unavailable}</td><td>ZooKeeper could not serve the lock or a
 * token (not run, or rolled back)</td></tr>
 * <tr><td>500</td><td>{@code unexpected}</td><td>anything else, such as a database failure: the
 * outcome is unknown (a connection that fails during the commit may fail after the database
 * committed)</td></tr>
 * </table>
 * Why no other error follows a commit: the lock advice runs outside {@code @Transactional}, so the
 * transaction has committed or rolled back before the lock is released, and every failure of the
 * lock itself (busy, lost, stale, ZooKeeper) is thrown before the commit or by the commit guard,
 * which rolls back; the release that follows a commit is logged when it fails, never thrown, and
 * the interrupt that {@code zk.lock.interrupt-on-lost} sends for a grant lost after the commit is
 * cleared before the answer is written. The asynchronous increment answers a committed increment
 * as committed even when the template reports its grant lost afterwards
 * ({@link CounterIncrement#lostAfterCommit()}), and it has no request timeout, so that no timeout
 * is answered while it may still commit.
 */
@RestController
@RequestMapping("/chaos")
@Profile(ChaosConfiguration.PROFILE)
public class ChaosController {

	/** The longest account count {@code POST /accounts} takes. */
	static final int MAX_ACCOUNTS = 10_000;

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

	/** No request timeout: the answer waits for the outcome (see the type's description). */
	private static final long NO_TIMEOUT = -1;

	private final CounterService counters;

	private final TransferService transfers;

	/**
	 * Create the controller.
	 * @param counters the counter workloads
	 * @param transfers the account workload
	 */
	public ChaosController(CounterService counters, TransferService transfers) {
		this.counters = counters;
		this.transfers = transfers;
	}

	/**
	 * Increment a counter under its lock, fenced.
	 * @param name the counter's name
	 * @param op the operation id
	 * @return the committed increment
	 */
	@PostMapping("/counter/fenced/{name}")
	public CounterIncrement incrementFenced(@PathVariable String name, @RequestParam String op) {
		return onRequestThread(() -> this.counters.incrementFenced(checkName(name), checkOp(op)));
	}

	/**
	 * Increment a counter under its lock, without the fence.
	 * @param name the counter's name
	 * @param op the operation id
	 * @return the committed increment
	 */
	@PostMapping("/counter/unfenced/{name}")
	public CounterIncrement incrementUnfenced(@PathVariable String name, @RequestParam String op) {
		return onRequestThread(() -> this.counters.incrementUnfenced(checkName(name), checkOp(op)));
	}

	/**
	 * Increment a counter under its lock, fenced, through the asynchronous template; the request
	 * thread is freed while the lock is waited for.
	 * @param name the counter's name
	 * @param op the operation id
	 * @return the committed increment, once known
	 */
	@PostMapping("/counter/async/{name}")
	public DeferredResult<CounterIncrement> incrementAsync(@PathVariable String name, @RequestParam String op) {
		DeferredResult<CounterIncrement> result = new DeferredResult<>(NO_TIMEOUT);
		this.counters.incrementAsync(checkName(name), checkOp(op)).whenComplete((increment, ex) -> {
			if (ex != null) {
				result.setErrorResult((ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex);
			}
			else {
				result.setResult(increment);
			}
		});
		return result;
	}

	/**
	 * Read a counter.
	 * @param name the counter's name
	 * @return its value and the number of its recorded increments
	 */
	@GetMapping("/counter/{name}")
	public CounterState counter(@PathVariable String name) {
		return this.counters.state(checkName(name));
	}

	/**
	 * Open the accounts.
	 * @param count how many accounts, 1 to {@value #MAX_ACCOUNTS}
	 * @param balance the balance of each account opened, at least 0
	 * @param reset whether to start over (see {@link TransferService#open})
	 * @return how many were added and the accounts' state
	 */
	@PostMapping("/accounts")
	public TransferService.OpenedAccounts openAccounts(@RequestParam int count, @RequestParam long balance,
			@RequestParam(defaultValue = "false") boolean reset) {
		if (count < 1 || count > MAX_ACCOUNTS) {
			throw badRequest("count must be 1 to " + MAX_ACCOUNTS + ", was " + count);
		}
		if (balance < 0) {
			throw badRequest("balance must not be negative, was " + balance);
		}
		return this.transfers.open(count, balance, reset);
	}

	/**
	 * Move an amount between two accounts.
	 * @param from the account to debit
	 * @param to the account to credit
	 * @param amount the amount, positive
	 * @param op the operation id
	 * @return the committed transfer
	 */
	@PostMapping("/transfer")
	public Transfer transfer(@RequestParam int from, @RequestParam int to, @RequestParam long amount,
			@RequestParam String op) {
		if (from < 0 || to < 0 || from == to) {
			throw badRequest("from and to must be two different account ids, were " + from + " and " + to);
		}
		if (amount < 1) {
			throw badRequest("amount must be positive, was " + amount);
		}
		return onRequestThread(() -> this.transfers.transfer(from, to, amount, checkOp(op)));
	}

	/**
	 * Read the accounts.
	 * @return their count, sum, lowest balance and the number of transfers
	 */
	@GetMapping("/accounts")
	public AccountsState accounts() {
		return this.transfers.state();
	}

	/**
	 * Make a locked call on the request thread. With {@code zk.lock.interrupt-on-lost}, a grant lost
	 * after its transaction ended (committed or not) leaves this thread interrupted: the interrupt
	 * was meant for the work under the lock, which is over, and must not fail the writing of the
	 * answer, nor the next request this thread serves.
	 */
	private static <T> T onRequestThread(Supplier<T> call) {
		try {
			return call.get();
		}
		finally {
			Thread.interrupted();
		}
	}

	private static String checkName(String name) {
		if (!NAME.matcher(name).matches()) {
			throw badRequest("name must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit");
		}
		return name;
	}

	private static String checkOp(String op) {
		if (op.isEmpty() || op.length() > 100) {
			throw badRequest("op must have 1 to 100 characters");
		}
		return op;
	}

	private static ResponseStatusException badRequest(String message) {
		return new ResponseStatusException(HttpStatus.BAD_REQUEST, message);
	}

}
