#include "agent/store/store_subscriptions.h"

#include <algorithm>

namespace kwb::agent {

namespace detail {

struct Subscriber {
    explicit Subscriber(StoreCallback callback) : callback(std::move(callback)) {}

    StoreCallback callback;
    // Held while the callback runs. Recursive, so a callback can end its own subscription.
    std::recursive_mutex calling;
    bool active = true; // guarded by `calling`
};

struct SubscriberList {
    std::mutex mutex;
    std::vector<std::shared_ptr<Subscriber>> subscribers;
};

} // namespace detail

Subscription& Subscription::operator=(Subscription&& other) noexcept {
    if (this != &other) {
        reset();
        subscriber_ = std::move(other.subscriber_);
        list_ = std::move(other.list_);
    }
    return *this;
}

void Subscription::reset() {
    if (!subscriber_)
        return;
    {
        std::lock_guard calling(subscriber_->calling);
        subscriber_->active = false;
    }
    if (auto list = list_.lock()) {
        std::lock_guard lock(list->mutex);
        std::erase(list->subscribers, subscriber_);
    }
    subscriber_.reset();
    list_.reset();
}

UpdateBroadcaster::UpdateBroadcaster() : list_(std::make_shared<detail::SubscriberList>()) {}

Subscription UpdateBroadcaster::subscribe(StoreCallback callback) {
    auto subscriber = std::make_shared<detail::Subscriber>(std::move(callback));
    std::lock_guard lock(list_->mutex);
    list_->subscribers.push_back(subscriber);
    return Subscription(std::move(subscriber), list_);
}

void UpdateBroadcaster::publish(std::vector<StoreUpdate> updates) {
    if (updates.empty())
        return;
    {
        std::lock_guard lock(list_->mutex);
        if (list_->subscribers.empty())
            return; // nobody listens: keep writes free of copies
    }
    std::lock_guard lock(queueMutex_);
    for (StoreUpdate& update : updates)
        queue_.push_back(std::move(update));
}

void UpdateBroadcaster::deliver() {
    if (deliveringThread_.load() == std::this_thread::get_id())
        return;
    std::lock_guard delivering(deliveryMutex_);
    struct MarkDelivering {
        std::atomic<std::thread::id>& thread;
        explicit MarkDelivering(std::atomic<std::thread::id>& t) : thread(t) {
            thread = std::this_thread::get_id();
        }
        ~MarkDelivering() { thread = std::thread::id(); }
    } mark(deliveringThread_);

    for (;;) {
        std::deque<StoreUpdate> batch;
        {
            std::lock_guard lock(queueMutex_);
            if (queue_.empty())
                return;
            batch.swap(queue_);
        }
        std::vector<std::shared_ptr<detail::Subscriber>> subscribers;
        {
            std::lock_guard lock(list_->mutex);
            subscribers = list_->subscribers;
        }
        for (const StoreUpdate& update : batch) {
            for (const auto& subscriber : subscribers) {
                std::lock_guard calling(subscriber->calling);
                if (!subscriber->active)
                    continue;
                try {
                    subscriber->callback(update);
                } catch (...) {
                    // The write has already committed; a failing consumer must not turn it
                    // into an error for the writer, nor keep the others from hearing it.
                }
            }
        }
    }
}

} // namespace kwb::agent
