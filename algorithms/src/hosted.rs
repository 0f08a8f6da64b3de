//! The one host of every process of a client-service algorithm: the election members (the
//! clients) and each process of the modeled service (an etcd server or cluster member, a
//! ZooKeeper server, an API server) are each a [`Process`] of their own, run side by side as
//! [`HostedProcess`]es. No algorithm keeps an enum of its process kinds to dispatch each
//! hook by hand: a new kind of service process is one more type, and a new hook of
//! [`Process`] reaches every kind by itself.

use splitbrain_sim::{Message, Process, TimerKind};
use std::any::Any;

/// A process a run hosts beside others of other types: any [`Process`] that can be looked
/// at as its own type again (`get`, on `dyn Hosted`: tests and `run --stop-at` read a
/// member's state).
pub trait Hosted: Process + Any {
    /// The process as [`Any`], to look at its own type.
    fn as_any(&self) -> &dyn Any;

    /// A copy of the process, hosted (a checkpoint, a test's look at a finished run).
    fn clone_hosted(
        &self,
    ) -> Box<dyn Hosted<Msg = Self::Msg, Timer = Self::Timer, Durable = Self::Durable>>;
}

impl<P: Process + Clone + Any> Hosted for P {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn clone_hosted(
        &self,
    ) -> Box<dyn Hosted<Msg = Self::Msg, Timer = Self::Timer, Durable = Self::Durable>> {
        Box::new(self.clone())
    }
}

/// One process of a run whose processes are of several types with one message type `M` and
/// timer kinds `T`.
///
/// ```
/// use splitbrain_algorithms::etcd::{EtcdClient, EtcdConfig, EtcdService};
/// use splitbrain_algorithms::hosted::HostedProcess;
/// let config = EtcdConfig::default();
/// let processes = splitbrain_algorithms::etcd::processes(2, &config);
/// assert!(processes[0].get::<EtcdClient>().is_some());
/// assert!(processes[2].get::<EtcdService>().is_some());
/// assert!(processes[2].get::<EtcdClient>().is_none());
/// ```
pub type HostedProcess<M, T> = Box<dyn Hosted<Msg = M, Timer = T, Durable = ()>>;

impl<M: Message + 'static, T: TimerKind + 'static> dyn Hosted<Msg = M, Timer = T, Durable = ()> {
    /// The process as a `P`, if it is one.
    pub fn get<P: Any>(&self) -> Option<&P> {
        self.as_any().downcast_ref()
    }
}

impl<M: Message + 'static, T: TimerKind + 'static> Clone for HostedProcess<M, T> {
    fn clone(&self) -> Self {
        // The process inside, not the box (a box is `Hosted` too, by the blanket impl).
        (**self).clone_hosted()
    }
}

/// `process`, hosted.
pub fn host<P>(process: P) -> HostedProcess<P::Msg, P::Timer>
where
    P: Process<Durable = ()> + Clone + Any,
{
    Box::new(process)
}
